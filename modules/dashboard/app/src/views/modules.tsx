/** The modules of the service: state, version, whether it is a security module, and the last hot reload. */
import { useApi } from '../lib/use-api.tsx';
import { fmtTime } from '../lib/format.tsx';
import { ErrorText } from '../components/error.tsx';
import { Pager, usePage } from '../components/pager.tsx';
import { Table } from '../components/table.tsx';

interface ModuleInfo {
  id: string;
  version: string;
  description: string;
  state: string;
  critical: boolean;
  third_party: boolean;
  error?: string;
  last_reload?: { at: string; ok: boolean; ms: number; error?: string };
}

export default function ModulesView() {
  const m = useApi<{ modules: ModuleInfo[] }>('/api/modules');
  const page = usePage(m.data?.modules ?? [], 100);
  return (
    <section>
      <h1>Modules</h1>
      <ErrorText error={m.error} />
      <Table columns={['Module', 'State', 'Version', 'Description', 'Last reload']}>
        {page.items.map((x) => (
          <tr>
            <th scope="row">
              {x.id}
              {x.critical && <span class="badge"> security</span>}
              {x.third_party && <span class="badge"> third party</span>}
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
