/**
 * Context-engine plugins: the installed ones (enable or disable, reload, uninstall, their status), what the registries
 * offer (install), installing from a folder or a git repository, a new plugin from the scaffold, and which runtimes
 * this machine has.
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtJson, Pager, seg, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Plugin {
  name: string;
  version: string;
  description: string;
  runtime: string;
  hooks: Record<string, string>;
  hooks_valid: boolean;
  enabled: boolean;
  status: string;
  error: string | null;
  signed: boolean;
  active: boolean;
}
interface Registry {
  name: string;
  offline: boolean;
  error?: string;
  plugins: { name: string; display_name: string; version: string; description: string; installed: boolean }[];
}
interface Doctor {
  runtimes: { runtime: string; available: boolean; version: string | null; install_hint: string }[];
}

export default function PluginsView() {
  const plugins = useApi<{ plugins: Plugin[] }>('/api/plugins');
  const doctor = useApi<Doctor>('/api/plugins/doctor');
  const reload = () => void plugins.reload();
  return (
    <section>
      <h1>Plugins</h1>
      <p class="muted">Context-engine plugins run hook scripts around each turn (ingest, assemble, after the turn, compaction…).</p>
      <Installed list={plugins.data?.plugins ?? []} error={plugins.error} onChanged={reload} />
      <Registries onInstalled={reload} />
      <InstallPlugin runtimes={doctor.data?.runtimes.filter((r) => r.available).map((r) => r.runtime) ?? []} onInstalled={reload} />
      <h2>Runtimes on this machine</h2>
      <ErrorText error={doctor.error} />
      <ul class="chips">
        {doctor.data?.runtimes.map((r) => (
          <li title={r.available ? (r.version ?? '') : r.install_hint}>
            {r.runtime}: {r.available ? 'yes' : 'no'}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Installed({ list, error, onChanged }: { list: Plugin[]; error: unknown; onChanged: () => void }) {
  const page = usePage(list, 50);
  return (
    <>
      <h2>Installed</h2>
      <ErrorText error={error} />
      {!list.length && <p>No plugin is installed.</p>}
      <ul class="cards">
        {page.items.map((p) => (
          <PluginCard key={p.name} p={p} onChanged={onChanged} />
        ))}
      </ul>
      {list.length > 0 && <Pager {...page} label="plugins" />}
    </>
  );
}

function PluginCard({ p, onChanged }: { p: Plugin; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const status = useApi<Record<string, unknown>>(open ? `/api/plugins/${seg(p.name)}/status` : null);
  const action = useAction();
  const base = `/api/plugins/${seg(p.name)}`;
  const act = (fn: () => Promise<unknown>, done: string) =>
    void action.run(async () => {
      await fn();
      onChanged();
      return done;
    });
  return (
    <li class="card">
      <h3>
        {p.name} <span class="muted">{p.version}</span>{' '}
        <span class={`badge ${p.status === 'loaded' && p.enabled ? 'ok' : 'off'}`}>{p.enabled ? p.status : 'disabled'}</span>
        {p.signed && <span class="badge">signed</span>}
      </h3>
      {p.description && <p>{p.description}</p>}
      <p class="muted">
        {p.runtime} · hooks: {Object.keys(p.hooks).join(', ') || 'none'}
        {!p.hooks_valid && ' (some hooks are not valid)'}
      </p>
      {p.error && <p class="error">{p.error}</p>}
      <div class="inline">
        <button type="button" onClick={() => act(() => api(`${base}/enable`, { json: { enabled: !p.enabled } }), p.enabled ? 'Disabled' : 'Enabled')}>
          {p.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" onClick={() => act(() => api(`${base}/reload`, { method: 'POST' }), 'Reloaded')}>
          Reload
        </button>
        <button
          type="button"
          class="danger"
          onClick={() => confirm(`Uninstall ${p.name}?`) && act(() => api('/api/plugins/uninstall', { json: { name: p.name } }), 'Uninstalled')}
        >
          Uninstall
        </button>
        {action.done && <span role="status">{action.done}</span>}
      </div>
      <ErrorText error={action.error ?? status.error} />
      <details onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>Status</summary>
        {status.data && <pre>{fmtJson(status.data)}</pre>}
      </details>
    </li>
  );
}

function Registries({ onInstalled }: { onInstalled: () => void }) {
  const regs = useApi<{ registries: Registry[]; note?: string }>('/api/plugins/registries');
  const action = useAction();
  const offered = (regs.data?.registries ?? []).flatMap((r) => r.plugins.map((p) => ({ ...p, registry: r.name })));
  const page = usePage(offered, 25);
  return (
    <>
      <h2>From the registries</h2>
      <ErrorText error={regs.error ?? action.error} />
      {regs.data?.registries.map((r) => r.error && <p class="muted">{`${r.name}: ${r.offline ? 'offline' : ''} ${r.error}`}</p>)}
      {regs.data?.note && <p class="muted">{regs.data.note}</p>}
      {action.done && <p role="status">{action.done}</p>}
      {regs.data && !offered.length && <p>The registries offer no plugin.</p>}
      <ul class="cards">
        {page.items.map((p) => (
          <li class="card inline">
            <strong>{p.display_name || p.name}</strong> <span class="muted">{p.version}</span> <span>{p.description}</span>
            <span class="spacer" />
            {p.installed ? (
              <span class="badge ok">installed</span>
            ) : (
              <button
                type="button"
                disabled={action.busy}
                aria-label={`Install ${p.name}`}
                onClick={() =>
                  void action.run(async () => {
                    await api('/api/plugins/install', { json: { source: 'registry', name: p.name, registry: p.registry } });
                    await regs.reload();
                    onInstalled();
                    return `Installed ${p.name}`;
                  })
                }
              >
                Install
              </button>
            )}
          </li>
        ))}
      </ul>
      {offered.length > 0 && <Pager {...page} label="offered plugins" />}
    </>
  );
}

function InstallPlugin({ runtimes, onInstalled }: { runtimes: string[]; onInstalled: () => void }) {
  const [where, setWhere] = useState('');
  const [name, setName] = useState('');
  const [runtime, setRuntime] = useState('');
  const action = useAction();
  const run = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      onInstalled();
      return done;
    });
  return (
    <div class="card grid-form">
      <h2>Install or create</h2>
      <label for="plugin-source">A local folder (absolute path) or a git repository URL</label>
      <div class="inline">
        <input id="plugin-source" class="wide" value={where} onInput={(e) => setWhere(e.currentTarget.value)} />
        <button
          type="button"
          disabled={!where.trim() || action.busy}
          onClick={() =>
            run(async () => {
              const src = where.trim();
              const body = /^https?:\/\//.test(src) ? { source: 'git', url: src } : { source: 'local', path: src };
              const r = await api<{ name?: string }>('/api/plugins/install', { json: body });
              setWhere('');
              return `Installed ${r.name ?? src}`;
            })
          }
        >
          Install
        </button>
      </div>
      <label for="plugin-name">A new plugin: name and runtime (hook files to fill in are written for you)</label>
      <div class="inline">
        <input id="plugin-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="plugin-runtime" class="sr-only">
          Runtime
        </label>
        <select id="plugin-runtime" value={runtime} onChange={(e) => setRuntime(e.currentTarget.value)}>
          <option value="">runtime…</option>
          {runtimes.map((r) => (
            <option value={r}>{r}</option>
          ))}
        </select>
        <button
          type="button"
          disabled={!name.trim() || !runtime || action.busy}
          onClick={() =>
            run(async () => {
              const r = await api<{ path: string }>('/api/plugins/scaffold', { json: { name: name.trim(), runtime } });
              setName('');
              return `Created ${name.trim()} in ${r.path}`;
            })
          }
        >
          Create
        </button>
      </div>
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
    </div>
  );
}
