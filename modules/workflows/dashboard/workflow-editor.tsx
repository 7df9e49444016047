/**
 * The workflow step editor: name, description and an ordered list of steps (add, remove, move), each with its agent,
 * prompt template, mode, error handling and the steps it runs after (any makes the workflow a graph); the fields a
 * mode needs appear with it. Renaming or removing a step follows in the others' "runs after". Saving sends the whole
 * definition (POST /api/workflows or PUT /api/workflows/{id}); a refusal that names a step is shown on that step.
 */
import { useState } from 'preact/hooks';
import { AgentPicker, api, ApiError, ErrorText, seg, useAction } from '@talon/dashboard-kit';

export interface StepDef {
  name: string;
  agent_name: string | null;
  agent_id?: string | null;
  prompt: string;
  mode: string;
  error_mode: string;
  max_retries: number;
  timeout_secs: number | null;
  output_var: string | null;
  condition: string;
  max_iterations: number;
  until: string;
  session_mode: string | null;
  summarize: boolean;
  depends_on: string[];
}

export interface WorkflowDef {
  id?: string;
  name: string;
  description: string;
  steps: StepDef[];
  total_timeout_secs: number | null;
}

const MODES = ['sequential', 'fan_out', 'collect', 'conditional', 'loop'];
const ERROR_MODES = ['fail', 'skip', 'retry'];

export const newStep = (n: number): StepDef => ({
  name: `step ${n}`,
  agent_name: null,
  prompt: '{{input}}',
  mode: 'sequential',
  error_mode: 'fail',
  max_retries: 3,
  timeout_secs: null,
  output_var: null,
  condition: '',
  max_iterations: 5,
  until: '',
  session_mode: null,
  summarize: false,
  depends_on: [],
});

/** The body POST and PUT take: empty optional fields left out, so the service's defaults apply. */
function toBody(w: WorkflowDef) {
  const steps = w.steps.map((s) => {
    const { agent_id, ...rest } = s;
    const step: Record<string, unknown> = { ...rest, agent_name: s.agent_name || undefined, agent_id: s.agent_name ? undefined : agent_id || undefined };
    for (const key of ['timeout_secs', 'backoff_ms', 'output_var', 'session_mode'] as const) if (step[key] === null || step[key] === '') delete step[key];
    return step;
  });
  return { name: w.name.trim(), description: w.description, steps, ...(w.total_timeout_secs ? { total_timeout_secs: w.total_timeout_secs } : {}) };
}

/** The step a refusal names — "body/steps/2/mode must be…" by index, "step 'draft': …" by name — if it names one. */
function stepOf(error: unknown, steps: StepDef[]): number | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const byIndex = /steps[/[](\d+)/.exec(error.message);
  if (byIndex) return Number(byIndex[1]);
  const byName = /^step '([^']*)'/.exec(error.message);
  const i = byName ? steps.findIndex((s) => s.name.trim() === byName[1]) : -1;
  return i >= 0 ? i : undefined;
}

export function WorkflowEditor({ initial, onSaved }: { initial: WorkflowDef; onSaved: (id: string) => void }) {
  const [w, setW] = useState<WorkflowDef>(initial);
  const action = useAction();
  const failedStep = stepOf(action.error, w.steps);
  const setStep = (i: number, patch: Partial<StepDef>) => {
    const was = w.steps[i].name;
    // A renamed step stays a dependency of the steps that run after it.
    const rename = (names: string[]) => (patch.name === undefined ? names : names.map((n) => (n === was ? patch.name! : n)));
    setW({ ...w, steps: w.steps.map((s, j) => (j === i ? { ...s, ...patch } : { ...s, depends_on: rename(s.depends_on) })) });
  };
  const remove = (i: number) =>
    setW({ ...w, steps: w.steps.filter((_, j) => j !== i).map((s) => ({ ...s, depends_on: s.depends_on.filter((n) => n !== w.steps[i].name) })) });
  const move = (i: number, by: number) => {
    const steps = [...w.steps];
    [steps[i], steps[i + by]] = [steps[i + by], steps[i]];
    setW({ ...w, steps });
  };
  const save = () =>
    action.run(async () => {
      const body = toBody(w);
      if (w.id) {
        await api(`/api/workflows/${seg(w.id)}`, { method: 'PUT', json: body });
        onSaved(w.id);
      } else onSaved((await api<{ workflow_id: string }>('/api/workflows', { json: body })).workflow_id);
      return 'Saved';
    });
  return (
    <form
      class="grid-form workflow-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label for="wf-name">Name</label>
      <input id="wf-name" required value={w.name} onInput={(e) => setW({ ...w, name: e.currentTarget.value })} />
      <label for="wf-description">Description</label>
      <input id="wf-description" value={w.description} onInput={(e) => setW({ ...w, description: e.currentTarget.value })} />
      <label for="wf-timeout">Time limit of a whole run (seconds; empty: the service default)</label>
      <input
        id="wf-timeout"
        type="number"
        min="0"
        value={w.total_timeout_secs ?? ''}
        onInput={(e) => setW({ ...w, total_timeout_secs: e.currentTarget.value ? Number(e.currentTarget.value) : null })}
      />
      <h2>Steps</h2>
      <ol class="steps">
        {w.steps.map((s, i) => (
          <li>
            <StepFields
              step={s}
              index={i}
              others={w.steps.filter((_, j) => j !== i).map((o) => o.name)}
              error={failedStep === i ? action.error : undefined}
              onChange={(patch) => setStep(i, patch)}
            />
            <div class="inline">
              <button type="button" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move ${s.name} up`}>
                Up
              </button>
              <button type="button" disabled={i === w.steps.length - 1} onClick={() => move(i, 1)} aria-label={`Move ${s.name} down`}>
                Down
              </button>
              <button type="button" class="danger" onClick={() => remove(i)} aria-label={`Remove ${s.name}`}>
                Remove
              </button>
            </div>
          </li>
        ))}
      </ol>
      <p>
        <button type="button" onClick={() => setW({ ...w, steps: [...w.steps, newStep(w.steps.length + 1)] })}>
          Add a step
        </button>
      </p>
      {failedStep === undefined && <ErrorText error={action.error} />}
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy || !w.steps.length}>
        Save workflow
      </button>
    </form>
  );
}

interface StepProps {
  step: StepDef;
  index: number;
  /** The names of the other steps: what this one may run after. */
  others: string[];
  error: unknown;
  onChange: (patch: Partial<StepDef>) => void;
}

function StepFields({ step: s, index, others, error, onChange }: StepProps) {
  const id = (f: string) => `step-${index}-${f}`;
  const text = (f: 'name' | 'output_var' | 'condition' | 'until') => ({
    id: id(f),
    value: s[f] ?? '',
    onInput: (e: Event) => onChange({ [f]: (e.currentTarget as HTMLInputElement).value }),
  });
  return (
    <fieldset class={error ? 'card step-fields invalid' : 'card step-fields'}>
      <legend>Step {index + 1}</legend>
      <label for={id('name')}>Name</label>
      <input required {...text('name')} />
      <label for={id('agent')}>Agent</label>
      <AgentPicker
        id={id('agent')}
        chosen={s.agent_name ? { name: s.agent_name } : null}
        placeholder={s.agent_id ? `(agent ${s.agent_id})` : s.mode === 'collect' ? 'none (gather only)' : 'Type to find an agent'}
        onChoose={(a) => onChange({ agent_name: a.name })}
        onClear={() => onChange({ agent_name: null })}
      />
      <label for={id('prompt')}>
        Prompt ({'{{input}}'} is the previous output — the run input in a graph; {'{{name}}'} a step's output variable, or its name in a graph)
      </label>
      <textarea id={id('prompt')} rows={3} value={s.prompt} onInput={(e) => onChange({ prompt: e.currentTarget.value })} />
      <div class="inline">
        <label for={id('mode')}>Mode</label>
        <select id={id('mode')} value={s.mode} onChange={(e) => onChange({ mode: e.currentTarget.value })}>
          {MODES.map((m) => (
            <option value={m}>{m.replace('_', ' ')}</option>
          ))}
        </select>
        <label for={id('error')}>On error</label>
        <select id={id('error')} value={s.error_mode} onChange={(e) => onChange({ error_mode: e.currentTarget.value })}>
          {ERROR_MODES.map((m) => (
            <option value={m}>{m}</option>
          ))}
        </select>
        {s.error_mode === 'retry' && (
          <>
            <label for={id('retries')}>Retries</label>
            <input
              id={id('retries')}
              type="number"
              min="0"
              class="narrow"
              value={s.max_retries}
              onInput={(e) => onChange({ max_retries: Number(e.currentTarget.value) })}
            />
          </>
        )}
        <label for={id('timeout')}>Time limit (s)</label>
        <input
          id={id('timeout')}
          type="number"
          min="0"
          class="narrow"
          placeholder="default"
          value={s.timeout_secs ?? ''}
          onInput={(e) => onChange({ timeout_secs: e.currentTarget.value ? Number(e.currentTarget.value) : null })}
        />
        <label for={id('output_var')}>Output variable</label>
        <input {...text('output_var')} class="narrow" />
      </div>
      {s.mode === 'collect' && (
        <label class="inline">
          <input type="checkbox" checked={s.summarize} onChange={(e) => onChange({ summarize: e.currentTarget.checked })} />
          Summarise the gathered results with the step's agent (one turn; otherwise they go on as they are)
        </label>
      )}
      {others.length > 0 && (
        <fieldset class="inline runs-after">
          <legend>Runs after (any makes the workflow a graph)</legend>
          {others.map((name) => (
            <label class="inline">
              <input
                type="checkbox"
                checked={s.depends_on.includes(name)}
                onChange={(e) => onChange({ depends_on: e.currentTarget.checked ? [...s.depends_on, name] : s.depends_on.filter((n) => n !== name) })}
              />
              {name}
            </label>
          ))}
        </fieldset>
      )}
      {s.mode === 'conditional' && (
        <>
          <label for={id('condition')}>Runs when the previous output has (a && b, a || b, !a)</label>
          <input {...text('condition')} />
        </>
      )}
      {s.mode === 'loop' && (
        <div class="inline">
          <label for={id('iterations')}>At most</label>
          <input
            id={id('iterations')}
            type="number"
            min="1"
            class="narrow"
            value={s.max_iterations}
            onInput={(e) => onChange({ max_iterations: Number(e.currentTarget.value) })}
          />
          <label for={id('until')}>iterations, until the output has</label>
          <input {...text('until')} />
        </div>
      )}
      <ErrorText error={error} />
    </fieldset>
  );
}
