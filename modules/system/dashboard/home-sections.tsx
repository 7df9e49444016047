/** The sections of the home (home.tsx), each reading its module's API; the home shows a section only while that module runs. */
import { api, ErrorText, fmtInt, fmtTime, fmtUsd, href, plural, Table, useAction, useAgentNames, useApi, useHasModule } from '@talon/dashboard-kit';
import { testProvider, type ProviderChoice } from './first-run.ts';
import { keyWords } from './setup.tsx';

interface Health {
  status: 'ok' | 'degraded';
  version: string;
  uptime_seconds: number;
  checks: { name: string; status: string; error?: string }[];
  modules: { id: string; state: string }[];
}

const duration = (s: number) => (s < 3600 ? `${Math.floor(s / 60)} min` : s < 86400 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 86400)} d`);

export function HealthSection() {
  const h = useApi<Health>('/api/health/detail');
  const d = h.data;
  const failed = d?.modules.filter((m) => m.state === 'failed' || m.state === 'blocked') ?? [];
  return (
    <section class="card" aria-labelledby="home-health">
      <h2 id="home-health">Health</h2>
      <ErrorText error={h.error} />
      {d && (
        <>
          <p>
            <span class={d.status === 'ok' ? 'badge ok' : 'badge'}>{d.status}</span> version {d.version}, up {duration(d.uptime_seconds)}
          </p>
          <p>
            {plural(d.modules.filter((m) => m.state === 'running').length, 'module')} running
            {failed.length > 0 && <>; not running: {failed.map((m) => `${m.id} (${m.state})`).join(', ')}</>}
          </p>
          {d.checks
            .filter((c) => c.status !== 'ok')
            .map((c) => (
              <p class="warn">
                {c.name}: {c.error ?? c.status}
              </p>
            ))}
        </>
      )}
    </section>
  );
}

export function ProvidersSection({ choices }: { choices: ProviderChoice[] }) {
  return (
    <section class="card" aria-labelledby="home-providers">
      <h2 id="home-providers">Providers</h2>
      <Table columns={['Provider', 'Key from', { hidden: 'Test' }]}>
        {choices.map((c) => (
          <ProviderRow key={c.provider.name} choice={c} />
        ))}
      </Table>
      <p>
        <a href={href('models')}>All providers and models</a>
      </p>
    </section>
  );
}

function ProviderRow({ choice }: { choice: ProviderChoice }) {
  const test = useAction();
  const p = choice.provider;
  const call = <T,>(path: string, init?: { method?: string }) => api<T>(path, init);
  return (
    <tr>
      <td>{p.display_name}</td>
      <td class="breakable">{keyWords(choice)}</td>
      <td class="inline">
        <button
          type="button"
          aria-label={`Test ${p.display_name}`}
          disabled={test.busy}
          onClick={() =>
            void test.run(async () => {
              const t = await testProvider(call, p.name);
              return t.latency_ms !== undefined ? `answers (${fmtInt(t.latency_ms)} ms)` : 'answers';
            })
          }
        >
          Test
        </button>
        <span role="status">{test.done}</span>
        <ErrorText error={test.error} />
      </td>
    </tr>
  );
}

interface AgentRow {
  id: string;
  name: string;
  state: string;
  model_name: string;
}

const SHOWN = 10;

export function AgentsSection() {
  const usage = useHasModule('usage');
  const agents = useApi<AgentRow[]>(`/api/agents?limit=${SHOWN}&offset=0`);
  const costs = useApi<{ agent_id: string; today_cost_usd: number }[]>(usage ? '/api/budget/agents' : null);
  const today = useApi<{ today: { cost_usd: number; requests: number } }>(usage ? '/api/usage/summary' : null);
  const costOf = new Map((costs.data ?? []).map((c) => [c.agent_id, c.today_cost_usd]));
  const rows = agents.data ?? [];
  return (
    <section class="card" aria-labelledby="home-agents">
      <h2 id="home-agents">Agents</h2>
      <ErrorText error={agents.error ?? costs.error ?? today.error} />
      {today.data && (
        <p>
          Today: {fmtUsd(today.data.today.cost_usd)} in {fmtInt(today.data.today.requests)} model calls
        </p>
      )}
      <Table columns={usage ? ['Agent', 'State', 'Model', 'Cost today'] : ['Agent', 'State', 'Model']}>
        {rows.map((a) => (
          <tr>
            <td>
              <a href={href('chat', a.id)}>{a.name}</a>
            </td>
            <td>{a.state}</td>
            <td>{a.model_name}</td>
            {usage && <td>{fmtUsd(costOf.get(a.id) ?? 0)}</td>}
          </tr>
        ))}
      </Table>
      <p>
        <a href={href('agents')}>{rows.length === SHOWN ? 'All agents' : 'Agents'}</a>
      </p>
    </section>
  );
}

interface Approval {
  id: string;
  agent_name: string;
  action: string;
  created_at: string;
}

export function ApprovalsSection() {
  const pending = useApi<{ approvals: Approval[]; total: number }>('/api/approvals?status=pending&limit=5&offset=0');
  const d = pending.data;
  return (
    <section class="card" aria-labelledby="home-approvals">
      <h2 id="home-approvals">Pending approvals</h2>
      <ErrorText error={pending.error} />
      {d && (d.total === 0 ? <p>None waiting.</p> : <p>{plural(d.total, 'request waits', 'requests wait')} for a decision.</p>)}
      {d && d.approvals.length > 0 && (
        <ul>
          {d.approvals.map((a) => (
            <li>
              {a.agent_name}: {a.action} <span class="muted">({fmtTime(a.created_at)})</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <a href={href('approvals')}>Approvals</a>
      </p>
    </section>
  );
}

interface FailedTurn {
  turn_id: string;
  agent_id: string;
  started_at: string;
  error: string | null;
}

export function FailuresSection() {
  const failed = useApi<{ turns: FailedTurn[] }>('/api/turns?outcome=error&limit=5&offset=0');
  const turns = failed.data?.turns ?? [];
  const nameOf = useAgentNames(turns.map((t) => t.agent_id));
  return (
    <section class="card" aria-labelledby="home-failures">
      <h2 id="home-failures">Recent failures</h2>
      <ErrorText error={failed.error} />
      {failed.data && turns.length === 0 && <p>No failed turn.</p>}
      {turns.length > 0 && (
        <ul>
          {turns.map((t) => (
            <li>
              <a href={href('agents', t.agent_id)}>{nameOf(t.agent_id)}</a> <span class="muted">{fmtTime(t.started_at)}</span>: {t.error ?? 'failed'}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
