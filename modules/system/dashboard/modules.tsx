/**
 * The modules of the service: state, version, whether it is a security module, the last hot reload, and a switch
 * that turns each on or off while the service runs (PUT /api/modules/{name}/enable|disable). Switching a module off
 * first says which running modules go with it.
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtTime, Pager, Table, useAction, useApi, usePage, useRefreshModules } from '@talon/dashboard-kit';

interface ModuleInfo {
  id: string;
  version: string;
  description: string;
  state: string;
  critical: boolean;
  third_party: boolean;
  error?: string;
  dependants: string[];
  last_reload?: { at: string; ok: boolean; ms: number; error?: string };
}

interface Switched {
  module: { id: string; state: string; error?: string };
  changed: { id: string; previous: string; state: string }[];
}

/** What a switch did, in words: "base: running → disabled; child: running → blocked". */
const describe = (s: Switched) =>
  s.changed.length ? s.changed.map((c) => `${c.id}: ${c.previous} → ${c.state}`).join('; ') : `${s.module.id} is ${s.module.state}`;

export default function ModulesView() {
  const m = useApi<{ modules: ModuleInfo[] }>('/api/modules');
  const page = usePage(m.data?.modules ?? [], 100);
  const action = useAction();
  const refreshModules = useRefreshModules();
  // A module about to be switched off whose running dependants would go with it: asked before it happens.
  const [confirming, setConfirming] = useState<{ id: string; going: string[] } | undefined>(undefined);
  const running = new Set((m.data?.modules ?? []).filter((x) => x.state === 'running').map((x) => x.id));

  const flip = (id: string, on: boolean) =>
    action.run(async () => {
      setConfirming(undefined);
      const result = await api<Switched>(`/api/modules/${encodeURIComponent(id)}/${on ? 'enable' : 'disable'}`, { method: 'PUT' });
      await m.reload();
      refreshModules();
      return describe(result);
    });

  const toggle = (x: ModuleInfo, on: boolean) => {
    const going = x.dependants.filter((d) => running.has(d));
    if (!on && going.length) setConfirming({ id: x.id, going });
    else void flip(x.id, on);
  };

  return (
    <section>
      <h1>Modules</h1>
      <ErrorText error={m.error} />
      {action.done && <p role="status">{action.done}</p>}
      <ErrorText error={action.error} />
      {confirming && (
        <div class="card" role="alertdialog" aria-label={`Disable ${confirming.id}?`}>
          <p>
            Disabling <strong>{confirming.id}</strong> also stops {confirming.going.join(', ')}, which need it.
          </p>
          <button type="button" onClick={() => void flip(confirming.id, false)} disabled={action.busy}>
            Disable {confirming.going.length + 1} modules
          </button>{' '}
          <button type="button" onClick={() => setConfirming(undefined)}>
            Cancel
          </button>
        </div>
      )}
      <Table columns={['On', 'Module', 'State', 'Version', 'Description', 'Last reload']}>
        {page.items.map((x) => (
          <tr>
            <td>
              <input
                type="checkbox"
                role="switch"
                aria-label={`${x.id} on`}
                checked={x.state !== 'disabled'}
                disabled={action.busy}
                onChange={(e) => toggle(x, (e.currentTarget as HTMLInputElement).checked)}
              />
            </td>
            <th scope="row">
              {x.id}
              {x.critical && <span class="badge"> security</span>}
              {x.third_party && <span class="badge"> third party</span>}
              {x.dependants.length > 0 && <div class="muted">needed by {x.dependants.join(', ')}</div>}
            </th>
            <td>
              <span class={`badge ${x.state === 'running' ? 'ok' : 'off'}`}>{x.state}</span>
              {x.error && <div class={x.state === 'failed' ? 'error' : 'muted'}>{x.error}</div>}
            </td>
            <td>{x.version}</td>
            <td>{x.description}</td>
            <td>{x.last_reload ? `${fmtTime(x.last_reload.at)} ${x.last_reload.ok ? 'ok' : `failed: ${x.last_reload.error ?? ''}`}` : '—'}</td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="modules" />
    </section>
  );
}
