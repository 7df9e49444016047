/**
 * Agents: the list with state, model and cost, a page at a time, searchable; spawn with the builder (fields or TOML,
 * from a template or from scratch); bulk start, stop and kill; per agent: edit, clone, stop, kill,
 * traces and logs (#/agents/<id>).
 */
import { useState } from 'preact/hooks';
import {
  api,
  ErrorText,
  fmtTime,
  fmtUsd,
  href,
  Pager,
  plural,
  seg,
  Table,
  useAction,
  useApi,
  useHasModule,
  useServerPage,
  type ViewProps,
} from '@talon/dashboard-kit';
import { AgentBuilder } from './builder.tsx';
import { AgentDetail } from './agent-detail.tsx';

interface AgentSummary {
  id: string;
  name: string;
  state: string;
  created_at: string;
  model_provider: string;
  model_name: string;
}
interface Cost {
  agent_id: string;
  total_cost_usd: number;
}

const EXAMPLE = `name = "helper"
description = "A helpful assistant"

[model]
provider = "default"
model = "default"
system_prompt = "You are a helpful assistant."

[capabilities]
tools = ["file_read", "file_write", "file_list"]
`;

export default function AgentsView({ params }: ViewProps) {
  if (params[0]) return <AgentDetail id={params[0]} />;
  return <AgentList />;
}

function AgentList() {
  const [q, setQ] = useState('');
  const agents = useServerPage<AgentSummary[], AgentSummary>(q.trim() ? `/api/agents?q=${seg(q.trim())}` : '/api/agents', (d) => ({ items: d }), 50);
  const costs = useApi<Cost[]>(useHasModule('usage') ? '/api/budget/agents' : null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const action = useAction();
  const cost = (id: string) => costs.data?.find((c) => c.agent_id === id)?.total_cost_usd;

  const bulk = (label: string, method: string, path: string) =>
    void action.run(async () => {
      const res = await api<{ succeeded: number; failed: number }>(path, { method, json: { ids: [...selected] } });
      setSelected(new Set());
      await agents.reload();
      return `${label}: ${res.succeeded} done, ${res.failed} failed`;
    });
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };

  return (
    <section>
      <h1>Agents</h1>
      <p class="inline">
        <label for="agent-filter">Find agents</label>
        <input id="agent-filter" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
      </p>
      <ErrorText error={agents.error} />
      <div class="toolbar" role="toolbar" aria-label="Bulk actions">
        <span>{selected.size} selected</span>
        <button type="button" disabled={!selected.size} onClick={() => bulk('Started', 'POST', '/api/agents/bulk/start')}>
          Start
        </button>
        <button type="button" disabled={!selected.size} onClick={() => bulk('Stopped', 'POST', '/api/agents/bulk/stop')}>
          Stop
        </button>
        <button
          type="button"
          class="danger"
          disabled={!selected.size}
          onClick={() =>
            confirm(`Kill ${plural(selected.size, 'agent')}? Their sessions and workspaces go with them.`) && bulk('Killed', 'DELETE', '/api/agents/bulk')
          }
        >
          Kill
        </button>
        {action.done && <span role="status">{action.done}</span>}
      </div>
      <ErrorText error={action.error} />
      <Table columns={[{ hidden: 'Select' }, 'Name', 'State', 'Model', 'Cost', 'Created', 'Actions']}>
        {agents.items.map((a) => (
          <tr>
            <td>
              <input type="checkbox" aria-label={`Select ${a.name}`} checked={selected.has(a.id)} onChange={() => toggle(a.id)} />
            </td>
            <td>
              <a href={href('agents', a.id)}>{a.name}</a>
            </td>
            <td>
              <span class={`badge state-${a.state.toLowerCase()}`}>{a.state}</span>
            </td>
            <td>
              {a.model_provider}/{a.model_name}
            </td>
            <td>{fmtUsd(cost(a.id))}</td>
            <td>{fmtTime(a.created_at)}</td>
            <td>
              <a href={href('chat', a.id)}>Chat</a>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...agents} label="agents" />
      <Spawn onSpawned={() => void agents.reload()} />
    </section>
  );
}

function Spawn({ onSpawned }: { onSpawned: () => void }) {
  const [manifest, setManifest] = useState(EXAMPLE);
  const action = useAction();
  const templates = useApi<{ templates: { name: string; description: string }[] }>(useHasModule('templates') ? '/api/templates' : null);
  const pick = (name: string) =>
    void action.run(async () => {
      if (!name) return;
      const t = await api<{ manifest_toml: string }>(`/api/templates/${encodeURIComponent(name)}`);
      setManifest(t.manifest_toml);
      return `Template ${name} loaded into the builder: change what you like, then spawn`;
    });
  return (
    <section aria-labelledby="spawn-title">
      <h2 id="spawn-title">Spawn an agent</h2>
      {templates.data && (
        <p class="inline">
          <label for="template-pick">From a template</label>
          <select id="template-pick" onChange={(e) => pick(e.currentTarget.value)}>
            <option value="">Choose…</option>
            {templates.data.templates.map((t) => (
              <option value={t.name}>
                {t.name} — {t.description}
              </option>
            ))}
          </select>
        </p>
      )}
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <AgentBuilder initial={manifest} onDone={onSpawned} />
    </section>
  );
}
