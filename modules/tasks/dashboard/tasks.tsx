/** The task board: a column per state (each a page at a time), post a task (for an agent or anyone), cancel, retry. */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtTime, Pager, seg, useAction, useServerPage } from '@talon/dashboard-kit';

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
  const action = useAction();
  const [title, setTitle] = useState('');
  const [assignee, setAssignee] = useState('');
  // Every column is read again after a change (a task moves between them).
  const [version, setVersion] = useState(0);
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      setVersion((v) => v + 1);
      return done;
    });
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
      <ErrorText error={action.error} />
      <div class="board">
        {COLUMNS.map(([status, heading]) => (
          <Column key={`${status}-${version}`} status={status} heading={heading} act={act} />
        ))}
      </div>
    </section>
  );
}

function Column({ status, heading, act }: { status: string; heading: string; act: (fn: () => Promise<string>) => void }) {
  const tasks = useServerPage<{ tasks: Task[]; total: number }, Task>(`/api/tasks/list?status=${status}`, (d) => ({ items: d.tasks, total: d.total }), 20);
  return (
    <section aria-label={heading}>
      <h2>
        {heading} ({tasks.total ?? '…'})
      </h2>
      <ErrorText error={tasks.error} />
      <ul class="cards">
        {tasks.items.map((t) => (
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
              <button type="button" onClick={() => act(async () => (await api(`/api/tasks/${seg(t.id)}/retry`, { method: 'POST' }), 'Back to pending'))}>
                Retry
              </button>
            )}
          </li>
        ))}
      </ul>
      {(tasks.pages ?? 1) > 1 && <Pager {...tasks} label={`${heading.toLowerCase()} tasks`} />}
    </section>
  );
}
