/** The task board: a column per state, post a task (for an agent or anyone), cancel, retry. */
import { useState } from 'preact/hooks';
import { api, seg } from '../lib/api.tsx';
import { useApi } from '../lib/use-api.tsx';
import { fmtTime } from '../lib/format.tsx';
import { ErrorText } from '../components/error.tsx';
import { useAction } from '../components/action.tsx';

interface Task {
  id: string;
  title: string;
  description: string;
  status: string;
  assigned_to: string | null;
  created_at: string;
  result: string | null;
  retry_count: number;
}

const COLUMNS: [string, string][] = [
  ['pending', 'Pending'],
  ['in_progress', 'In progress'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
];

export default function TasksView() {
  const tasks = useApi<{ tasks: Task[]; total: number }>('/api/tasks/list?limit=200');
  const action = useAction();
  const [title, setTitle] = useState('');
  const [assignee, setAssignee] = useState('');
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await tasks.reload();
      return done;
    });
  const all = tasks.data?.tasks ?? [];
  return (
    <section>
      <h1>Task board</h1>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          act(async () => {
            await api('/api/tasks', { json: { title, assigned_to: assignee.trim() || null } });
            setTitle('');
            return `Posted “${title}”`;
          });
        }}
      >
        <label for="task-title">New task</label>
        <input id="task-title" required value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        <label for="task-assignee">For (agent name or id; empty: anyone)</label>
        <input id="task-assignee" value={assignee} onInput={(e) => setAssignee(e.currentTarget.value)} />
        <button type="submit" class="primary" disabled={action.busy}>
          Post
        </button>
      </form>
      {action.done && <p role="status">{action.done}</p>}
      <ErrorText error={tasks.error ?? action.error} />
      <p class="muted">
        The newest {all.length} of {tasks.data?.total ?? 0} tasks.
      </p>
      <div class="board">
        {COLUMNS.map(([status, title]) => (
          <section aria-label={title}>
            <h2>
              {title} ({all.filter((t) => t.status === status).length})
            </h2>
            <ul class="cards">
              {all
                .filter((t) => t.status === status)
                .map((t) => (
                  <li class="card">
                    <strong>{t.title}</strong>
                    <div class="muted">
                      {t.assigned_to ?? 'anyone'} · {fmtTime(t.created_at)}
                      {t.retry_count > 0 && ` · retried ${t.retry_count}×`}
                    </div>
                    {t.result && <p>{t.result}</p>}
                    {(status === 'pending' || status === 'in_progress') && (
                      <button type="button" onClick={() => act(async () => (await api(`/api/tasks/${seg(t.id)}`, { method: 'DELETE' }), 'Cancelled'))}>
                        Cancel
                      </button>
                    )}
                    {(status === 'failed' || status === 'cancelled') && (
                      <button
                        type="button"
                        onClick={() => act(async () => (await api(`/api/tasks/${seg(t.id)}/retry`, { method: 'POST' }), 'Back to pending'))}
                      >
                        Retry
                      </button>
                    )}
                  </li>
                ))}
            </ul>
          </section>
        ))}
      </div>
    </section>
  );
}
