/**
 * Workflow templates (#/workflows/templates): browse the hub registry's templates and the saved ones (search,
 * category), with the registry's sync state; one template (#/workflows/templates/<id>) opens a form of its
 * parameters — typed inputs, defaults filled in, required ones marked — and the agent for the steps that name none;
 * instantiating it opens the new workflow, ready to run.
 */
import { useEffect, useState } from 'preact/hooks';
import { AgentPicker, api, ErrorText, fmtTime, href, navigate, plural, SearchForm, seg, useAction, useApi } from '@talon/dashboard-kit';

interface Parameter {
  name: string;
  description: string;
  param_type: 'string' | 'number' | 'boolean' | 'agent_id';
  default: string | number | boolean | null;
  required: boolean;
}
interface Template {
  id: string;
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  parameters: Parameter[];
  steps: { name: string; agent?: string; depends_on?: string[] }[];
  source: string;
}
interface Listing {
  templates: Template[];
  total: number;
  categories: { name: string; count: number }[];
  registry: { revision: string | null; synced_at: string | null; offline: boolean; error?: string } | null;
}

const sourceLabel = (source: string) => (source === 'user' ? 'saved' : `${source.replace(/^registry:/, '')} registry`);

export function TemplateBrowser() {
  const [query, setQuery] = useState('');
  const [category, setCategory] = useState('');
  const params = new URLSearchParams({ ...(query && { q: query }), ...(category && { category }) }).toString();
  const list = useApi<Listing>(`/api/workflow-templates${params ? `?${params}` : ''}`);
  const action = useAction();
  const d = list.data;
  return (
    <section>
      <p>
        <a href={href('workflows')}>← All workflows</a>
      </p>
      <h1>Workflow templates</h1>
      {d && (
        <RegistryState
          registry={d.registry}
          onSync={() => void action.run(async () => (await api('/api/hub/sync', { method: 'POST' }), await list.reload(), 'Synced'))}
        />
      )}
      <SearchForm id="tpl-search" label="Search templates" onSearch={setQuery}>
        <label for="tpl-category">Category</label>
        <select id="tpl-category" value={category} onChange={(e) => setCategory(e.currentTarget.value)}>
          <option value="">all</option>
          {d?.categories.map((c) => (
            <option value={c.name}>
              {c.name} ({c.count})
            </option>
          ))}
        </select>
      </SearchForm>
      <ErrorText error={list.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      {d && !d.templates.length && <p>No template matches.</p>}
      <ul class="cards grid">
        {d?.templates.map((t) => (
          <li class="card">
            <h2>
              {t.name} <span class="badge">{sourceLabel(t.source)}</span>
            </h2>
            <p>{t.description}</p>
            <p class="muted">
              {t.category ?? 'no category'} · {plural(t.steps.length, 'step')} · {plural(t.parameters.length, 'parameter')}
              {t.tags.length > 0 && ` · ${t.tags.join(', ')}`}
            </p>
            <a class="button" href={href('workflows', 'templates', t.id)}>
              Use {t.name}
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function RegistryState({ registry, onSync }: { registry: Listing['registry']; onSync: () => void }) {
  if (!registry) return <p class="muted">The hub module is not running: only saved templates are listed.</p>;
  return (
    <p class="muted">
      {registry.revision === null
        ? 'The hub registry has not been synced yet: its templates show once it is.'
        : `${registry.offline ? 'Offline: the templates of the last sync' : 'Registry synced'} ${fmtTime(registry.synced_at)}`}
      {registry.error && <span class="error"> — {registry.error}</span>}{' '}
      <button type="button" class="small" onClick={onSync}>
        Sync the registry
      </button>
    </p>
  );
}

type Values = Record<string, string | boolean>;

/** The form's value of each parameter: its default, as the input holds it. */
const initialValues = (t: Template): Values =>
  Object.fromEntries(t.parameters.map((p) => [p.name, p.param_type === 'boolean' ? p.default === true : p.default === null ? '' : String(p.default)]));

/** The instantiate body: typed values; an empty text leaves the parameter to its default. */
function body(t: Template, values: Values): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const p of t.parameters) {
    const v = values[p.name];
    if (typeof v === 'boolean') out[p.name] = v;
    else if (v !== '') out[p.name] = p.param_type === 'number' ? Number(v) : v;
  }
  return out;
}

export function TemplateForm({ id }: { id: string }) {
  const loaded = useApi<Template>(`/api/workflow-templates/${seg(id)}`);
  const t = loaded.data;
  const [values, setValues] = useState<Values>({});
  const [agent, setAgent] = useState<{ name: string } | null>(null);
  const [name, setName] = useState('');
  const action = useAction();
  useEffect(() => {
    if (!t) return;
    setValues(initialValues(t));
    setName(t.name);
  }, [t]);
  if (loaded.error) return <ErrorText error={loaded.error} />;
  if (!t) return <p class="loading">Loading…</p>;
  const agentless = t.steps.some((s) => !s.agent);
  const set = (param: string, value: string | boolean) => setValues({ ...values, [param]: value });
  return (
    <section>
      <p>
        <a href={href('workflows', 'templates')}>← All templates</a>
      </p>
      <h1>{t.name}</h1>
      <p>{t.description}</p>
      <ol class="step-summary">
        {t.steps.map((s) => (
          <li>
            <strong>{s.name}</strong>
            {s.depends_on?.length ? ` — after ${s.depends_on.join(', ')}` : ''}
            {s.agent && ` (${s.agent})`}
          </li>
        ))}
      </ol>
      <form
        class="grid-form"
        onSubmit={action.submit(async () => {
          const query = new URLSearchParams({ ...(agent && { agent: agent.name }), ...(name.trim() && { name: name.trim() }) }).toString();
          const made = await api<{ workflow_id: string }>(`/api/workflow-templates/${seg(t.id)}/instantiate${query ? `?${query}` : ''}`, {
            json: body(t, values),
          });
          navigate('workflows', made.workflow_id);
        })}
      >
        <h2>Parameters</h2>
        {!t.parameters.length && <p class="muted">This template takes no parameters.</p>}
        {t.parameters.map((p) => (
          <ParameterField param={p} value={values[p.name] ?? ''} onChange={(v) => set(p.name, v)} />
        ))}
        <h2>Workflow</h2>
        <label for="tpl-name">Workflow name</label>
        <input id="tpl-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        {agentless && (
          <>
            <label for="tpl-agent">Agent that runs the steps</label>
            <AgentPicker
              id="tpl-agent"
              chosen={agent}
              placeholder='the agent named "default"'
              onChoose={(a) => setAgent({ name: a.name })}
              onClear={() => setAgent(null)}
            />
          </>
        )}
        <ErrorText error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create the workflow
        </button>
      </form>
      {t.source === 'user' && (
        <button
          type="button"
          class="danger"
          onClick={() =>
            confirm(`Delete the saved template ${t.name}?`) &&
            void action.run(async () => {
              await api(`/api/workflow-templates/${seg(t.id)}`, { method: 'DELETE' });
              navigate('workflows', 'templates');
            })
          }
        >
          Delete this template
        </button>
      )}
    </section>
  );
}

function ParameterField({ param: p, value, onChange }: { param: Parameter; value: string | boolean; onChange: (v: string | boolean) => void }) {
  const id = `param-${p.name}`;
  const help = p.description ? `${id}-help` : undefined;
  const label = (
    <label for={id}>
      {p.name}
      {p.required && <span class="muted"> (required)</span>}
    </label>
  );
  let input;
  if (p.param_type === 'boolean')
    input = <input id={id} type="checkbox" aria-describedby={help} checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
  else if (p.param_type === 'agent_id')
    input = <AgentPicker id={id} chosen={value ? { name: String(value) } : null} onChoose={(a) => onChange(a.name)} onClear={() => onChange('')} />;
  else
    input = (
      <input
        id={id}
        type={p.param_type === 'number' ? 'number' : 'text'}
        step={p.param_type === 'number' ? 'any' : undefined}
        required={p.required}
        aria-describedby={help}
        value={String(value)}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  return (
    <div class="field">
      {label}
      {input}
      {help && (
        <span id={help} class="muted">
          {p.description}
        </span>
      )}
    </div>
  );
}
