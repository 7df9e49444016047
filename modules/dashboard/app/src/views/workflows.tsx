/** Workflows: the definitions with their steps, run one with an input, and the recent runs of each. */
import { useState } from 'preact/hooks';
import { api, seg } from '../lib/api.tsx';
import { useApi } from '../lib/use-api.tsx';
import { fmtJson, fmtTime } from '../lib/format.tsx';
import { ErrorText } from '../components/error.tsx';
import { useAction } from '../components/action.tsx';

interface Workflow {
  id: string;
  name: string;
  description: string;
  /** The list gives the number of steps; the definition (GET /api/workflows/{id}) gives them. */
  steps: number;
  created_at: string;
}
interface Run {
  id: string;
  state: string;
  steps_completed: number;
  error: string | null;
  started_at: string;
  completed_at: string | null;
}

export default function WorkflowsView() {
  const workflows = useApi<Workflow[]>('/api/workflows');
  return (
    <section>
      <h1>Workflows</h1>
      <ErrorText error={workflows.error} />
      {workflows.data && !workflows.data.length && <p>No workflow yet (POST /api/workflows creates one; the step editor comes with the next pass).</p>}
      <ul class="cards">
        {workflows.data?.map((w) => (
          <WorkflowCard key={w.id} w={w} />
        ))}
      </ul>
    </section>
  );
}

function WorkflowCard({ w }: { w: Workflow }) {
  const runs = useApi<Run[]>(`/api/workflows/${seg(w.id)}/runs?limit=10`);
  const [input, setInput] = useState('');
  const action = useAction();
  return (
    <li class="card">
      <h2>{w.name}</h2>
      {w.description && <p>{w.description}</p>}
      <Steps id={w.id} count={w.steps} />
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const r = await api<{ state?: string; status?: string }>(`/api/workflows/${seg(w.id)}/run`, { json: { input } });
            await runs.reload();
            return `Run ended: ${r.state ?? r.status ?? 'done'}`;
          });
        }}
      >
        <label for={`wf-input-${w.id}`}>Input</label>
        <input id={`wf-input-${w.id}`} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Running…' : 'Run'}
        </button>
      </form>
      {action.done && <p role="status">{action.done}</p>}
      <ErrorText error={action.error ?? runs.error} />
      <ul>
        {runs.data?.map((r) => (
          <li>
            {fmtTime(r.started_at)} — {r.state}, {r.steps_completed} step(s){r.error && <span class="error"> {r.error}</span>}
          </li>
        ))}
      </ul>
    </li>
  );
}

function Steps({ id, count }: { id: string; count: number }) {
  const [open, setOpen] = useState(false);
  const detail = useApi<{ steps: unknown[] }>(open ? `/api/workflows/${seg(id)}` : null);
  return (
    <details onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>{count} step(s)</summary>
      <ErrorText error={detail.error} />
      {detail.data && <pre>{fmtJson(detail.data.steps)}</pre>}
    </details>
  );
}
