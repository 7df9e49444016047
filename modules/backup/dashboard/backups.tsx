/** Backups: create one, list them, download one, restore one in place, delete. */
import { api, download, ErrorText, fmtTime, Pager, plural, seg, Table, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Backup {
  filename: string;
  size_bytes: number;
  created_at: string | null;
  modified_at: string;
  components: string[] | null;
}
interface Restored {
  filename: string;
  modules_restarted: string[];
  warnings: string[];
}

export default function BackupsView() {
  const list = useApi<{ backups: Backup[]; total: number }>('/api/backups');
  const action = useAction();
  const page = usePage(list.data?.backups ?? [], 50);
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await list.reload();
      return done;
    });
  const restore = async (b: Backup) => {
    const r = await api<Restored>('/api/restore', { json: { filename: b.filename } });
    return `Restored ${r.filename}; restarted ${plural(r.modules_restarted.length, 'module')}${r.warnings.length ? `; ${r.warnings.join('; ')}` : ''}`;
  };
  return (
    <section>
      <h1>Backups</h1>
      <div class="toolbar">
        <button
          type="button"
          class="primary"
          disabled={action.busy}
          onClick={() => act(async () => `Created ${(await api<Backup>('/api/backup', { json: {} })).filename}`)}
        >
          Create a backup
        </button>
        {action.busy && <span class="muted">Working…</span>}
        {action.done && <span role="status">{action.done}</span>}
      </div>
      <p class="muted">An archive holds the database, the configuration without its secrets, workspaces, skills, hands and plugins.</p>
      <ErrorText error={list.error ?? action.error} />
      <Table columns={['File', 'Created', 'Size', 'Contents', { hidden: 'Actions' }]}>
        {page.items.map((b) => (
          <tr>
            <th scope="row">{b.filename}</th>
            <td>{fmtTime(b.created_at ?? b.modified_at)}</td>
            <td>{(b.size_bytes / 1024).toFixed(0)} KB</td>
            <td>{b.components?.join(', ') ?? 'unreadable manifest'}</td>
            <td class="inline">
              <button
                type="button"
                class="small"
                aria-label={`Download ${b.filename}`}
                onClick={() => void action.run(async () => (await download(`/api/backups/${seg(b.filename)}`, b.filename), `Downloading ${b.filename}`))}
              >
                Download
              </button>
              <button
                type="button"
                class="small"
                disabled={action.busy}
                onClick={() => confirm(`Restore ${b.filename}? The current data is replaced.`) && act(() => restore(b))}
              >
                Restore
              </button>
              <button
                type="button"
                class="small danger"
                disabled={action.busy}
                onClick={() =>
                  confirm(`Delete ${b.filename}?`) &&
                  act(async () => (await api(`/api/backups/${seg(b.filename)}`, { method: 'DELETE' }), `Deleted ${b.filename}`))
                }
              >
                Delete
              </button>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="backups" />
    </section>
  );
}
