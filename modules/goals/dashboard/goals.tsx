/**
 * Goals as a tree: the top-level goals a page at a time, each opening onto its sub-goals (read when opened). Per
 * goal: status, progress, add a sub-goal, delete (with its descendants). New goals by hand or from a template.
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtTime, Pager, plural, seg, useAction, useApi, useServerPage } from '@talon/dashboard-kit';

interface Goal {
  id: string;
  title: string;
  description: string;
  status: string;
  progress: number;
  agent_id: string | null;
  parent_id: string | null;
  due_at: string | null;
}
interface GoalPage {
  items: Goal[];
  total: number;
}
interface Templates {
  templates: { id: string; name: string; description: string; goals: unknown[] }[];
}

const STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'];

export default function GoalsView() {
  const roots = useServerPage<GoalPage, Goal>('/api/goals?parent_id=none', (d) => d, 50);
  return (
    <section>
      <h1>Goals</h1>
      <ErrorText error={roots.error} />
      {roots.data && !roots.items.length && <p>No goal yet.</p>}
      <ul class="goal-tree" aria-label="Goals">
        {roots.items.map((g) => (
          <GoalNode key={g.id} goal={g} onChanged={() => void roots.reload()} />
        ))}
      </ul>
      <Pager {...roots} label="top-level goals" />
      <NewGoal parentId={null} onCreated={() => void roots.reload()} />
      <FromTemplate onCreated={() => void roots.reload()} />
    </section>
  );
}

function GoalNode({ goal: g, onChanged }: { goal: Goal; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const [adding, setAdding] = useState(false);
  const children = useServerPage<{ children: Goal[]; total: number }, Goal>(
    open ? `/api/goals/${seg(g.id)}/children` : null,
    (d) => ({ items: d.children, total: d.total }),
    50,
  );
  const action = useAction();
  const update = (patch: Partial<Goal>) => void action.run(async () => (await api(`/api/goals/${seg(g.id)}`, { method: 'PUT', json: patch }), onChanged()));
  return (
    <li>
      <details onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>
          <strong>{g.title}</strong> <span class={`badge goal-${g.status}`}>{g.status.replace('_', ' ')}</span>{' '}
          <progress max={100} value={g.progress} aria-label={`${g.title}: progress`}>
            {g.progress}%
          </progress>{' '}
          {g.progress}%{g.due_at && <span class="muted"> · due {fmtTime(g.due_at)}</span>}
        </summary>
        {g.description && <p>{g.description}</p>}
        <div class="inline">
          <label for={`status-${g.id}`}>Status</label>
          <select id={`status-${g.id}`} value={g.status} onChange={(e) => update({ status: e.currentTarget.value })}>
            {STATUSES.map((s) => (
              <option value={s}>{s.replace('_', ' ')}</option>
            ))}
          </select>
          <label for={`progress-${g.id}`}>Progress %</label>
          <input
            id={`progress-${g.id}`}
            type="number"
            min="0"
            max="100"
            class="narrow"
            value={g.progress}
            onChange={(e) => update({ progress: Number(e.currentTarget.value) })}
          />
          <button type="button" onClick={() => setAdding(!adding)}>
            Add a sub-goal
          </button>
          <button
            type="button"
            class="danger"
            onClick={() =>
              confirm(`Delete “${g.title}” and all its sub-goals?`) &&
              void action.run(async () => (await api(`/api/goals/${seg(g.id)}`, { method: 'DELETE' }), onChanged()))
            }
          >
            Delete
          </button>
        </div>
        <ErrorText error={action.error ?? children.error} />
        {adding && (
          <NewGoal
            parentId={g.id}
            onCreated={() => {
              setAdding(false);
              void children.reload();
            }}
          />
        )}
        {children.items.length > 0 && (
          <ul aria-label={`Sub-goals of ${g.title}`}>
            {children.items.map((c) => (
              <GoalNode key={c.id} goal={c} onChanged={() => void children.reload()} />
            ))}
          </ul>
        )}
        {(children.pages ?? 1) > 1 && <Pager {...children} label="sub-goals" />}
      </details>
    </li>
  );
}

function NewGoal({ parentId, onCreated }: { parentId: string | null; onCreated: () => void }) {
  const [form, setForm] = useState({ title: '', description: '', due_at: '' });
  const action = useAction();
  const id = (f: string) => `goal-${parentId ?? 'root'}-${f}`;
  return (
    <form
      class="card grid-form"
      onSubmit={action.submit(async () => {
        await api('/api/goals', {
          json: { title: form.title, description: form.description, parent_id: parentId, ...(form.due_at ? { due_at: form.due_at } : {}) },
        });
        setForm({ title: '', description: '', due_at: '' });
        onCreated();
        return 'Goal created';
      })}
    >
      <h2>{parentId ? 'New sub-goal' : 'New goal'}</h2>
      <label for={id('title')}>Title</label>
      <input id={id('title')} required value={form.title} onInput={(e) => setForm({ ...form, title: e.currentTarget.value })} />
      <label for={id('description')}>Description</label>
      <input id={id('description')} value={form.description} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} />
      <label for={id('due')}>Due</label>
      <input id={id('due')} type="date" value={form.due_at} onInput={(e) => setForm({ ...form, due_at: e.currentTarget.value })} />
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy}>
        Create goal
      </button>
    </form>
  );
}

function FromTemplate({ onCreated }: { onCreated: () => void }) {
  const templates = useApi<Templates>('/api/goals/templates');
  const [chosen, setChosen] = useState('');
  const action = useAction();
  if (!templates.data?.templates.length) return <ErrorText error={templates.error} />;
  return (
    <form
      class="card inline"
      onSubmit={action.submit(async () => {
        const r = await api<{ goal: Goal; children: Goal[] }>(`/api/goals/templates/${seg(chosen)}/apply`, { json: {} });
        onCreated();
        return `Created “${r.goal.title}” with ${plural(r.children.length, 'sub-goal')}`;
      })}
    >
      <label for="goal-template">From a template</label>
      <select id="goal-template" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
        <option value="">Choose…</option>
        {templates.data.templates.map((t) => (
          <option value={t.id}>
            {t.name} ({plural(t.goals.length, 'sub-goal')})
          </option>
        ))}
      </select>
      <button type="submit" disabled={!chosen || action.busy}>
        Create
      </button>
      {action.done && <span role="status">{action.done}</span>}
      <ErrorText error={action.error} />
    </form>
  );
}
