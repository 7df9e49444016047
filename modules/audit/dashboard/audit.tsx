/** The audit trail: the entries of the hash chain, newest first, 500 at a time (older ones on request), and a check of the whole chain. */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtInt, fmtTime, Pager, plural, Table, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Entry {
  id: number;
  timestamp: string;
  event_type: string;
  agent_id: string | null;
  details: string;
  outcome?: string;
  hash: string;
}
interface Verify {
  status: string;
  chain_length: number;
  broken?: unknown[];
}

export default function AuditView() {
  const recent = useApi<{ entries: Entry[]; total: number }>('/api/audit/recent?limit=500');
  const [filter, setFilter] = useState('');
  const [verdict, setVerdict] = useState<Verify>();
  const [older, setOlder] = useState<Entry[]>([]);
  const action = useAction();
  const loaded = [...(recent.data?.entries ?? []), ...older];
  const total = recent.data?.total ?? 0;
  const loadOlder = () =>
    action.run(async () => {
      const next = await api<{ entries: Entry[] }>(`/api/audit/recent?limit=500&before=${loaded[loaded.length - 1].id}`);
      setOlder([...older, ...next.entries]);
    });
  const shown = loaded.filter((e) => !filter || `${e.event_type} ${e.details} ${e.agent_id ?? ''}`.toLowerCase().includes(filter.toLowerCase()));
  const page = usePage(shown, 50);
  return (
    <section>
      <h1>Audit trail</h1>
      <div class="toolbar">
        <button type="button" disabled={action.busy} onClick={() => void action.run(async () => setVerdict(await api<Verify>('/api/audit/verify')))}>
          Verify the chain
        </button>
        {verdict && (
          <span role="status" class={verdict.status === 'valid' ? '' : 'error'}>
            Chain {verdict.status}: {plural(verdict.chain_length, 'entry', 'entries')} checked.
          </span>
        )}
        <label for="audit-filter">Filter</label>
        <input id="audit-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </div>
      <p class="muted">
        The newest {fmtInt(loaded.length)} of {plural(total, 'entry', 'entries')}; the check covers the whole chain.{' '}
        {loaded.length > 0 && loaded.length < total && (
          <button type="button" disabled={action.busy} onClick={() => void loadOlder()}>
            Load 500 older entries
          </button>
        )}
      </p>
      <ErrorText error={recent.error ?? action.error} />
      <Table columns={['#', 'Time', 'Event', 'Outcome', 'Details', 'Hash']}>
        {page.items.map((e) => (
          <tr>
            <td>{e.id}</td>
            <td>{fmtTime(e.timestamp)}</td>
            <td>{e.event_type}</td>
            <td>{e.outcome ?? '—'}</td>
            <td>
              <code>{e.details}</code>
            </td>
            <td>
              <code title={e.hash}>{e.hash.slice(0, 12)}…</code>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="entries" />
    </section>
  );
}
