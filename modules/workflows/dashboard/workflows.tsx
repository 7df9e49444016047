/**
 * Workflows: the list (#/workflows), a new one or an edit in the step editor (#/workflows/new, #/workflows/<id>/edit),
 * one workflow (#/workflows/<id>): its steps, a run with an input, its runs with each step's result, saving it as a
 * template; and the templates (#/workflows/templates[/<id>], workflow-templates.tsx).
 */
import { useState } from 'preact/hooks';
import {
  api,
  ApiError,
  ErrorText,
  fmtTime,
  href,
  navigate,
  Pager,
  plural,
  seg,
  Table,
  useAction,
  useApi,
  usePage,
  useServerPage,
  type ViewProps,
} from '@talon/dashboard-kit';
import { newStep, WorkflowEditor, type WorkflowDef } from './workflow-editor.tsx';
import { TemplateBrowser, TemplateForm } from './workflow-templates.tsx';

interface Summary {
  id: string;
  name: string;
  description: string;
  /** The list gives the number of steps; the definition gives them. */
  steps: number;
  updated_at: string;
}
interface Run {
  id: string;
  state: string;
  steps_completed: number;
  origin: string;
  error: string | null;
  started_at: string;
  completed_at: string | null;
}
interface RunDetail extends Run {
  input: string;
  output: string;
  step_results: {
    step_name: string;
    iteration: number | null;
    agent_name: string | null;
    status: string;
    output: string;
    error: string | null;
    duration_ms: number;
  }[];
}

export default function WorkflowsView({ params }: ViewProps) {
  const [id, sub] = params;
  if (id === 'templates') return sub ? <TemplateForm key={sub} id={sub} /> : <TemplateBrowser />;
  if (id === 'new')
    return (
      <section>
        <h1>New workflow</h1>
        <WorkflowEditor initial={{ name: '', description: '', steps: [newStep(1)], total_timeout_secs: null }} onSaved={(w) => navigate('workflows', w)} />
      </section>
    );
  if (id) return <Workflow key={id} id={id} editing={sub === 'edit'} />;
  return <WorkflowList />;
}

function WorkflowList() {
  const list = useApi<Summary[]>('/api/workflows');
  const page = usePage(list.data ?? [], 50);
  return (
    <section>
      <h1>Workflows</h1>
      <p>
        <a class="button" href={href('workflows', 'new')}>
          New workflow
        </a>{' '}
        <a class="button" href={href('workflows', 'templates')}>
          From a template
        </a>
      </p>
      <ErrorText error={list.error} />
      <Table columns={['Workflow', 'Steps', 'Changed']}>
        {page.items.map((w) => (
          <tr>
            <th scope="row">
              <a href={href('workflows', w.id)}>{w.name}</a>
              {w.description && <div class="muted">{w.description}</div>}
            </th>
            <td>{w.steps}</td>
            <td>{fmtTime(w.updated_at)}</td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="workflows" />
    </section>
  );
}

function Workflow({ id, editing }: { id: string; editing: boolean }) {
  const def = useApi<WorkflowDef & { id: string }>(`/api/workflows/${seg(id)}`);
  const action = useAction();
  const [runs, setRuns] = useState(0);
  if (def.error) return <ErrorText error={def.error} />;
  const w = def.data;
  if (!w) return <p class="loading">Loading…</p>;
  if (editing)
    return (
      <section>
        <p>
          <a href={href('workflows', id)}>← {w.name}</a>
        </p>
        <h1>Edit {w.name}</h1>
        {/* The same view shows the workflow after the save: it reads the saved definition first. */}
        <WorkflowEditor initial={w} onSaved={() => void def.reload().then(() => navigate('workflows', id))} />
      </section>
    );
  return (
    <section>
      <p>
        <a href={href('workflows')}>← All workflows</a>
      </p>
      <h1>{w.name}</h1>
      {w.description && <p>{w.description}</p>}
      <div class="toolbar">
        <a class="button" href={href('workflows', id, 'edit')}>
          Edit steps
        </a>
        <button type="button" disabled={action.busy} onClick={() => void action.run(() => saveAsTemplate(id))}>
          Save as template
        </button>
        <button
          type="button"
          class="danger"
          onClick={() =>
            confirm(`Delete ${w.name} and its runs? Schedules and triggers that start it are disabled.`) &&
            void action.run(async () => {
              await api(`/api/workflows/${seg(id)}`, { method: 'DELETE' });
              navigate('workflows');
            })
          }
        >
          Delete
        </button>
      </div>
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <ol class="step-summary">
        {w.steps.map((s) => (
          <li>
            <strong>{s.name}</strong> — {s.mode.replace('_', ' ')}
            {s.depends_on.length > 0 && ` after ${s.depends_on.join(', ')}`}, {s.agent_name ?? s.agent_id ?? 'no agent'}: <code>{s.prompt}</code>
          </li>
        ))}
      </ol>
      <RunForm id={id} onRan={() => setRuns((n) => n + 1)} />
      <Runs key={runs} id={id} />
    </section>
  );
}

/** Saves the workflow as a template; when its id is taken, asks before replacing that template. */
async function saveAsTemplate(id: string): Promise<string | void> {
  const save = (replace: boolean) => api<{ template: { id: string } }>(`/api/workflows/${seg(id)}/save-as-template`, { json: replace ? { replace } : {} });
  try {
    return `Saved as the template ${(await save(false)).template.id}`;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 409) throw err;
    if (!confirm(`${err.message}. Replace that template?`)) return;
    return `Saved as the template ${(await save(true)).template.id}, in place of the one before`;
  }
}

function RunForm({ id, onRan }: { id: string; onRan: () => void }) {
  const [input, setInput] = useState('');
  const action = useAction();
  return (
    <form
      class="inline card"
      onSubmit={action.submit(async () => {
        const r = await api<{ status: string; error?: string }>(`/api/workflows/${seg(id)}/run`, { json: { input } });
        onRan();
        return r.error ? `Run ${r.status}: ${r.error}` : `Run ${r.status}`;
      })}
    >
      <label for="wf-input">Input</label>
      <input id="wf-input" value={input} onInput={(e) => setInput(e.currentTarget.value)} />
      <button type="submit" class="primary" disabled={action.busy}>
        {action.busy ? 'Running…' : 'Run'}
      </button>
      {action.done && <span role="status">{action.done}</span>}
      <ErrorText error={action.error} />
    </form>
  );
}

function Runs({ id }: { id: string }) {
  const runs = useServerPage<Run[], Run>(`/api/workflows/${seg(id)}/runs`, (d) => ({ items: d }), 20);
  return (
    <>
      <h2>Runs</h2>
      <ErrorText error={runs.error} />
      <ul class="cards">
        {runs.items.map((r) => (
          <RunItem key={r.id} run={r} onChanged={() => void runs.reload()} />
        ))}
      </ul>
      <Pager {...runs} label="runs" />
    </>
  );
}

function RunItem({ run, onChanged }: { run: Run; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const detail = useApi<RunDetail>(open ? `/api/workflows/runs/${seg(run.id)}` : null);
  const action = useAction();
  return (
    <li class="card">
      <details onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>
          {fmtTime(run.started_at)} — <span class="badge">{run.state}</span> {plural(run.steps_completed, 'step')}, {run.origin}
          {run.error && <span class="error"> {run.error}</span>}
        </summary>
        <ErrorText error={detail.error ?? action.error} />
        {run.state === 'Running' && (
          <button
            type="button"
            class="danger"
            onClick={() => void action.run(async () => (await api(`/api/workflows/runs/${seg(run.id)}/cancel`, { method: 'POST' }), onChanged()))}
          >
            Cancel the run
          </button>
        )}
        {detail.data && (
          <>
            <h3>Input</h3>
            <pre>{detail.data.input}</pre>
            <ol>
              {detail.data.step_results.map((s) => (
                <li>
                  <strong>{s.step_name}</strong>
                  {s.iteration !== null && ` (iteration ${s.iteration})`} — {s.status}, {s.agent_name ?? 'no agent'}, {s.duration_ms} ms
                  {s.error && <div class="error">{s.error}</div>}
                  {s.output && <pre>{s.output}</pre>}
                </li>
              ))}
            </ol>
            <h3>Output</h3>
            <pre>{detail.data.output || '—'}</pre>
          </>
        )}
      </details>
    </li>
  );
}
