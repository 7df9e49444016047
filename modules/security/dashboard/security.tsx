/** The security overview: each of the service's security systems, whether it is active and which module runs it. */
import { ErrorText, Table, useApi } from '@talon/dashboard-kit';

interface Security {
  security_systems: Record<string, string>;
  total_systems: number;
  active_systems?: number;
  all_active: boolean;
  implemented_by?: Record<string, string>;
}

export default function SecurityView() {
  const s = useApi<Security>('/api/security');
  const d = s.data;
  return (
    <section>
      <h1>Security</h1>
      <ErrorText error={s.error} />
      {d && (
        <>
          <p>
            {d.active_systems ?? Object.values(d.security_systems).filter((v) => v === 'active').length} of {d.total_systems} security systems are active
            {d.all_active ? '.' : '; the others belong to modules that are not installed or not configured.'}
          </p>
          <Table columns={['System', 'State', 'Module']}>
            {Object.entries(d.security_systems).map(([name, state]) => (
              <tr>
                <th scope="row">{name.replace(/_/g, ' ')}</th>
                <td>
                  <span class={`badge ${state === 'active' ? 'ok' : 'off'}`}>{state}</span>
                </td>
                <td>{d.implemented_by?.[name] ?? '—'}</td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </section>
  );
}
