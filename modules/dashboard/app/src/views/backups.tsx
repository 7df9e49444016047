/** Backups: create one, list them, restore one in place, delete. */
import { api, seg } from '../lib/api.tsx';
import { useApi } from '../lib/use-api.tsx';
import { fmtTime } from '../lib/format.tsx';
import { ErrorText } from '../components/error.tsx';
import { useAction } from '../components/action.tsx';

interface Backup {
  filename: string;
  size_bytes: number;
  created_at: string;
  components?: string[];
}

export default function BackupsView() {
  const list = useApi<{ backups: Backup[]; total: number }>('/api/backups');
  const action = useAction();
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await list.reload();
      return done;
    });
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
        {action.done && <span role="status">{action.done}</span>}
      </div>
      <ErrorText error={list.error ?? action.error} />
      <table class="table">
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Created</th>
            <th scope="col">Size</th>
            <th scope="col">Contents</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.backups.map((b) => (
            <tr>
              <th scope="row">{b.filename}</th>
              <td>{fmtTime(b.created_at)}</td>
              <td>{(b.size_bytes / 1024).toFixed(0)} KB</td>
              <td>{b.components?.join(', ') ?? '—'}</td>
              <td>
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    confirm(`Restore ${b.filename}? The current data is replaced.`) &&
                    act(async () => (await api('/api/restore', { json: { filename: b.filename } }), `Restored ${b.filename}`))
                  }
                >
                  Restore
                </button>{' '}
                <button
                  type="button"
                  class="danger"
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
        </tbody>
      </table>
    </section>
  );
}
