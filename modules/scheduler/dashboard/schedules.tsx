/** Schedules and cron jobs (one store): next run, last outcome; create, run now, pause or resume, delete. */
import { useState } from 'preact/hooks';
import {
  type AgentChoice,
  AgentPicker,
  api,
  ConfirmButton,
  ErrorText,
  fmtTime,
  Pager,
  seg,
  Table,
  useAction,
  useAgentNames,
  useServerPage,
} from '@talon/dashboard-kit';

interface Job {
  id: string;
  name: string;
  enabled: boolean;
  disabled_reason: string | null;
  next_run: string | null;
  last_run: string | null;
  last_status: string | null;
  last_error: string | null;
  agent_id: string | null;
  workflow_id: string | null;
  schedule: string;
  tz: string;
  prompt: string;
}

/**
 * The viewer's time zone, named as the browser has it ("Asia/Tokyo"), with its offset now. Times on this page are
 * the viewer's (fmtTime); each schedule's own zone, which its cron expression is read in, stays in its "When" column.
 * Only this view asks Intl for the zone's name (lib/format.tsx keeps Intl off the first load).
 */
function viewerZone(): string {
  const minutes = -new Date().getTimezoneOffset();
  const two = (n: number) => String(n).padStart(2, '0');
  const offset = `UTC${minutes < 0 ? '-' : '+'}${two(Math.floor(Math.abs(minutes) / 60))}:${two(Math.abs(minutes) % 60)}`;
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return name ? `${name}, ${offset}` : offset;
}

export default function SchedulesView() {
  const jobs = useServerPage<{ items: Job[]; total: number }, Job>('/api/schedules', (d) => d, 50);
  const action = useAction();
  const agentName = useAgentNames(jobs.items.map((j) => j.agent_id));
  const zone = viewerZone();
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await jobs.reload();
      return done;
    });
  return (
    <section>
      <h1>Schedules</h1>
      <ErrorText error={jobs.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <p class="muted" data-testid="viewer-zone">
        Times are in your time zone: {zone}.
      </p>
      <Table
        columns={[
          'Schedule',
          'When (cron or interval, in its time zone)',
          'Agent and message',
          `Next run (${zone})`,
          'Last run and outcome',
          { hidden: 'Actions' },
        ]}
      >
        {jobs.items.map((j) => (
          <tr>
            <th scope="row">
              {j.name}
              {!j.enabled && <div class="muted">paused{j.disabled_reason ? `: ${j.disabled_reason}` : ''}</div>}
            </th>
            <td>
              <code>{j.schedule}</code> <span class="muted">in {j.tz}</span>
            </td>
            <td>{j.workflow_id ? `workflow ${j.workflow_id}` : `${j.agent_id ? agentName(j.agent_id) : '—'}: “${j.prompt.slice(0, 60)}”`}</td>
            <td data-testid="next-run">{j.enabled ? fmtTime(j.next_run) : '—'}</td>
            <td>
              {j.last_run ? `${fmtTime(j.last_run)} ${j.last_status ?? ''}` : 'never'}
              {j.last_error && <div class="error">{j.last_error}</div>}
            </td>
            <td class="inline">
              <button type="button" onClick={() => act(async () => (await api(`/api/schedules/${seg(j.id)}/run`, { method: 'POST' }), `Ran ${j.name}`))}>
                Run now
              </button>
              <button
                type="button"
                onClick={() =>
                  act(
                    async () => (await api(`/api/schedules/${seg(j.id)}`, { method: 'PUT', json: { enabled: !j.enabled } }), j.enabled ? 'Paused' : 'Resumed'),
                  )
                }
              >
                {j.enabled ? 'Pause' : 'Resume'}
              </button>
              <ConfirmButton
                label={`Delete ${j.name}`}
                confirm={`Delete ${j.name} now`}
                onConfirm={() => act(async () => (await api(`/api/schedules/${seg(j.id)}`, { method: 'DELETE' }), `Deleted ${j.name}`))}
              >
                Delete
              </ConfirmButton>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...jobs} label="schedules" />
      <NewSchedule onCreated={() => void jobs.reload()} />
    </section>
  );
}

function NewSchedule({ onCreated }: { onCreated: () => void }) {
  const [form, setForm] = useState({ name: '', cron: '0 9 * * *', tz: '', prompt: '' });
  const [agent, setAgent] = useState<AgentChoice>();
  const action = useAction();
  const bind = (key: keyof typeof form) => ({
    id: `schedule-${key}`,
    value: form[key],
    onInput: (e: Event) => setForm({ ...form, [key]: (e.currentTarget as HTMLInputElement).value }),
  });
  return (
    <form
      class="card grid-form"
      onSubmit={action.submit(async () => {
        if (!agent) throw new Error('Choose the agent the schedule messages.');
        const job = await api<Job>('/api/schedules', { json: { ...form, agent_id: agent.id, tz: form.tz || undefined } });
        onCreated();
        return `Created ${job.name}; next run ${fmtTime(job.next_run)} (${viewerZone()})`;
      })}
    >
      <h2>New schedule</h2>
      <label for="schedule-name">Name</label>
      <input required {...bind('name')} />
      <label for="schedule-agent">Agent</label>
      <AgentPicker id="schedule-agent" chosen={agent} onChoose={setAgent} />
      <label for="schedule-cron">When</label>
      <input required aria-describedby="schedule-cron-help" {...bind('cron')} />
      <span id="schedule-cron-help" class="muted">
        A 5-field cron expression (minute hour day month weekday), “every 5m”, or “at 2030-01-01T09:00:00Z”.
      </span>
      <label for="schedule-tz">Time zone (IANA, default UTC)</label>
      <input {...bind('tz')} />
      <label for="schedule-prompt">Message to the agent</label>
      <textarea rows={3} required {...bind('prompt')} />
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy}>
        Create schedule
      </button>
    </form>
  );
}
