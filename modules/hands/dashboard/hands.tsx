/**
 * Hands: the installed definitions (activate, check requirements, uninstall a custom one), the running instances
 * (pause, resume, deactivate, their figures), and installing a hand from HAND.toml text or the hub registry.
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtTime, href, Pager, seg, Table, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Hand {
  id: string;
  name: string;
  version: string;
  description: string;
  category: string;
  source: string;
  is_custom: boolean;
  agents_count: number;
  requirements_met: boolean;
  active: boolean;
  degraded: boolean;
}
interface Instance {
  instance_id: string;
  hand_id: string;
  hand_name: string;
  status: string;
  degraded: boolean;
  agent_id: string | null;
  agent_name: string | null;
  activated_at: string;
}
interface Stats {
  uptime_secs: number;
  events_processed: number;
  errors: number;
  last_error: string | null;
  metrics: Record<string, { value: unknown }>;
}

export default function HandsView() {
  const hands = useApi<{ hands: Hand[]; broken?: { folder: string; reason: string }[] }>('/api/hands');
  const instances = useApi<{ instances: Instance[] }>('/api/hands/active');
  const reload = () => void Promise.all([hands.reload(), instances.reload()]);
  return (
    <section>
      <h1>Hands</h1>
      <p class="muted">A hand is a packaged autonomous worker: its agents, schedules and triggers start together when it is activated.</p>
      <Instances list={instances.data?.instances ?? []} error={instances.error} onChanged={reload} />
      <Definitions list={hands.data?.hands ?? []} error={hands.error} onChanged={reload} />
      {hands.data?.broken?.map((b) => (
        <p class="error">
          Not loaded: {b.folder}: {b.reason}
        </p>
      ))}
      <InstallHand onInstalled={reload} />
    </section>
  );
}

function Definitions({ list, error, onChanged }: { list: Hand[]; error: unknown; onChanged: () => void }) {
  const page = usePage(list, 50);
  const action = useAction();
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      try {
        return await fn();
      } finally {
        onChanged();
      }
    });
  return (
    <>
      <h2>Installed hands</h2>
      <ErrorText error={error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <Table columns={['Hand', 'Category', 'Requirements', { hidden: 'Actions' }]}>
        {page.items.map((h) => (
          <tr>
            <th scope="row">
              {h.name} <span class="muted">{h.version}</span>
              <div class="muted">{h.description}</div>
            </th>
            <td>{h.category}</td>
            <td>
              <span class={`badge ${h.requirements_met ? 'ok' : 'off'}`}>{h.requirements_met ? 'met' : 'not met'}</span>
            </td>
            <td class="inline">
              <button
                type="button"
                class="primary"
                aria-label={`Activate ${h.name}`}
                onClick={() => act(async () => `Activated ${(await api<Instance>(`/api/hands/${seg(h.id)}/activate`, { json: {} })).hand_name}`)}
              >
                Activate
              </button>
              <button
                type="button"
                onClick={() =>
                  act(async () => {
                    const r = await api<{ requirements_met: boolean; requirements: { label: string; satisfied: boolean; optional: boolean }[] }>(
                      `/api/hands/${seg(h.id)}/check-deps`,
                      { method: 'POST' },
                    );
                    const unmet = r.requirements.filter((x) => !x.satisfied && !x.optional).map((x) => x.label);
                    return r.requirements_met ? `${h.name}: every requirement is met` : `${h.name} needs: ${unmet.join(', ')}`;
                  })
                }
              >
                Check requirements
              </button>
              {h.is_custom && (
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    confirm(`Uninstall ${h.name}?`) && act(async () => (await api(`/api/hands/${seg(h.id)}`, { method: 'DELETE' }), `Uninstalled ${h.name}`))
                  }
                >
                  Uninstall
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="hands" />
    </>
  );
}

function Instances({ list, error, onChanged }: { list: Instance[]; error: unknown; onChanged: () => void }) {
  const page = usePage(list, 50);
  return (
    <>
      <h2>Running instances</h2>
      <ErrorText error={error} />
      {!list.length && <p>No hand is active.</p>}
      <ul class="cards">
        {page.items.map((i) => (
          <InstanceCard key={i.instance_id} i={i} onChanged={onChanged} />
        ))}
      </ul>
      {list.length > 0 && <Pager {...page} label="instances" />}
    </>
  );
}

function InstanceCard({ i, onChanged }: { i: Instance; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const stats = useApi<Stats>(open ? `/api/hands/instances/${seg(i.instance_id)}/stats` : null);
  const action = useAction();
  const base = `/api/hands/instances/${seg(i.instance_id)}`;
  const act = (fn: () => Promise<unknown>) => void action.run(async () => (await fn(), onChanged()));
  return (
    <li class="card">
      <h3>
        {i.hand_name} <span class={`badge ${i.status === 'Active' ? 'ok' : 'off'}`}>{i.status}</span>
        {i.degraded && <span class="badge">degraded</span>}
      </h3>
      <p>
        Since {fmtTime(i.activated_at)}
        {i.agent_id && (
          <>
            {' '}
            · <a href={href('chat', i.agent_id)}>chat with {i.agent_name}</a>
          </>
        )}
      </p>
      <div class="inline">
        {i.status === 'Paused' ? (
          <button type="button" onClick={() => act(() => api(`${base}/resume`, { method: 'POST' }))}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={() => act(() => api(`${base}/pause`, { method: 'POST' }))}>
            Pause
          </button>
        )}
        <button
          type="button"
          class="danger"
          onClick={() => confirm(`Deactivate ${i.hand_name}? Its agents, schedules and triggers are removed.`) && act(() => api(base, { method: 'DELETE' }))}
        >
          Deactivate
        </button>
      </div>
      <ErrorText error={action.error ?? stats.error} />
      <details onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>Figures</summary>
        {stats.data && (
          <dl class="stats">
            <div>
              <dt>Uptime</dt>
              <dd>{Math.round(stats.data.uptime_secs / 60)} min</dd>
            </div>
            <div>
              <dt>Events</dt>
              <dd>{stats.data.events_processed}</dd>
            </div>
            <div>
              <dt>Errors</dt>
              <dd>{stats.data.errors}</dd>
            </div>
            {Object.entries(stats.data.metrics).map(([name, m]) => (
              <div>
                <dt>{name}</dt>
                <dd>{m.value === null || m.value === undefined ? '—' : String(m.value)}</dd>
              </div>
            ))}
          </dl>
        )}
      </details>
    </li>
  );
}

function InstallHand({ onInstalled }: { onInstalled: () => void }) {
  const [toml, setToml] = useState('');
  const [slug, setSlug] = useState('');
  const action = useAction();
  const install = (body: Record<string, string>) =>
    void action.run(async () => {
      const r = await api<{ id?: string; name?: string; hand_id?: string }>('/api/hands/install', { json: body });
      setToml('');
      setSlug('');
      onInstalled();
      return `Installed ${r.name ?? r.id ?? r.hand_id ?? 'the hand'}`;
    });
  return (
    <div class="card grid-form">
      <h2>Install a hand</h2>
      <label for="hand-toml">HAND.toml</label>
      <textarea id="hand-toml" class="code" rows={6} spellcheck={false} value={toml} onInput={(e) => setToml(e.currentTarget.value)} />
      <p>
        <button type="button" disabled={!toml.trim() || action.busy} onClick={() => install({ toml_content: toml })}>
          Install from the text
        </button>
      </p>
      <label for="hand-slug">Or a hand of the hub registry (its id)</label>
      <div class="inline">
        <input id="hand-slug" value={slug} onInput={(e) => setSlug(e.currentTarget.value)} />
        <button type="button" disabled={!slug.trim() || action.busy} onClick={() => install({ slug: slug.trim() })}>
          Install from the hub
        </button>
      </div>
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
    </div>
  );
}
