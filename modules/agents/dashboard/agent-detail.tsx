/** One agent: edit it with the builder (its manifest as it stands); clone, stop, kill; its recent turns (traces) and its log. */
import { api, ErrorText, fmtInt, fmtTime, fmtUsd, href, navigate, Pager, seg, Table, useAction, useApi, useServerPage } from '@talon/dashboard-kit';
import { AgentBuilder } from './builder.tsx';

interface Detail {
  id: string;
  name: string;
  state: string;
  mode: string;
  model: { provider: string; model: string };
}
interface Trace {
  turn_id: string;
  started_at: string;
  duration_ms: number;
  iterations: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  outcome: string;
  error: string | null;
  steps: { tools: { tool: string; ms: number; is_error: boolean }[] }[];
}

export function AgentDetail({ id }: { id: string }) {
  const agent = useApi<Detail>(`/api/agents/${seg(id)}`);
  const manifest = useApi<{ manifest_toml: string }>(`/api/agents/${seg(id)}/manifest`);
  const action = useAction();
  if (agent.error) return <ErrorText error={agent.error} />;
  const a = agent.data;
  if (!a) return <p class="loading">Loading…</p>;
  const base = `/api/agents/${seg(id)}`;
  return (
    <section>
      <p>
        <a href={href('agents')}>← All agents</a>
      </p>
      <h1>{a.name}</h1>
      <p>
        <span class={`badge state-${a.state.toLowerCase()}`}>{a.state}</span> · {a.mode} mode · {a.model.provider}/{a.model.model} ·{' '}
        <a href={href('chat', a.id)}>Chat</a>
      </p>
      <div class="toolbar">
        <button type="button" onClick={() => void action.run(async () => (await api(`${base}/stop`, { method: 'POST' }), 'Stopped its turns'))}>
          Stop turns
        </button>
        <button
          type="button"
          onClick={() =>
            void action.run(async () => {
              const c = await api<{ agent_id?: string; id?: string }>(`${base}/clone`, { method: 'POST' });
              navigate('agents', c.agent_id ?? c.id ?? '');
              return 'Cloned';
            })
          }
        >
          Clone
        </button>
        <button
          type="button"
          class="danger"
          onClick={() =>
            confirm(`Kill ${a.name}?`) &&
            void action.run(async () => {
              await api(base, { method: 'DELETE' });
              navigate('agents');
            })
          }
        >
          Kill
        </button>
      </div>
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <h2>Settings</h2>
      <ErrorText error={manifest.error} />
      {manifest.data && (
        <AgentBuilder
          initial={manifest.data.manifest_toml}
          agentId={id}
          onDone={() => {
            void agent.reload();
            void manifest.reload();
          }}
        />
      )}
      <Traces id={id} />
      <Logs id={id} />
    </section>
  );
}

function Traces({ id }: { id: string }) {
  const traces = useServerPage<{ traces: Trace[] }, Trace>(`/api/agents/${seg(id)}/traces`, (d) => ({ items: d.traces }), 20);
  return (
    <>
      <h2>Recent turns</h2>
      <ErrorText error={traces.error} />
      <Table columns={['Started', 'Outcome', 'Model calls', 'Tools', 'Tokens in/out', 'Cost', 'Time']}>
        {traces.items.map((t) => (
          <tr>
            <td>{fmtTime(t.started_at)}</td>
            <td>{t.error ? `${t.outcome}: ${t.error}` : t.outcome}</td>
            <td>{t.iterations}</td>
            <td>{t.steps.flatMap((s) => s.tools.map((x) => `${x.tool}${x.is_error ? ' (failed)' : ''}`)).join(', ') || '—'}</td>
            <td>
              {fmtInt(t.input_tokens)}/{fmtInt(t.output_tokens)}
            </td>
            <td>{fmtUsd(t.cost_usd)}</td>
            <td>{t.duration_ms} ms</td>
          </tr>
        ))}
      </Table>
      <Pager {...traces} label="turns" />
    </>
  );
}

interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  origin: string;
}

function Logs({ id }: { id: string }) {
  const logs = useServerPage<{ logs: LogLine[] }, LogLine>(`/api/agents/${seg(id)}/logs`, (d) => ({ items: d.logs }), 50);
  return (
    <>
      <h2>Log</h2>
      <ErrorText error={logs.error} />
      <ol class="log-lines" aria-label="Log of the agent">
        {logs.items.map((l) => (
          <li class={`log-${l.level}`}>
            <span class="time">{fmtTime(l.timestamp)}</span> <span class="level">{l.level}</span> <span class="module">{l.origin}</span> {l.message}
          </li>
        ))}
      </ol>
      <Pager {...logs} label="lines" />
    </>
  );
}
