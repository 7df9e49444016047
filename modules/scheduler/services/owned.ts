/**
 * The scheduler.jobs service: jobs other modules create (a hand's schedules, auto-dream's consolidations), through
 * the same checks as the API.
 */
import type { JobSummary, SchedulerJobs } from '@talon/scheduler';
import type { JobRow, JobStore } from './jobs.ts';
import type { Scheduler } from './scheduler.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function summary(job: JobRow): JobSummary {
  return {
    id: job.id,
    name: job.name,
    agent_id: job.agent_id,
    schedule: job.schedule,
    handler: job.handler,
    enabled: job.enabled === 1,
    next_run: iso(job.next_run),
    last_run: iso(job.last_run),
    run_count: job.run_count,
  };
}

export function ownedJobs(scheduler: Scheduler, jobs: JobStore): SchedulerJobs {
  return {
    create: async (request, via) =>
      summary(
        await scheduler.create(
          {
            name: request.name,
            agent_id: request.agentId,
            cron: request.schedule,
            tz: request.tz,
            prompt: request.prompt,
            enabled: request.enabled,
            session_mode: request.sessionMode,
          },
          via,
          request.handler,
        ),
      ),
    get: async (id) => {
      const job = await jobs.get(id);
      return job && summary(job);
    },
    setEnabled: async (id, enabled) => {
      if (!(await jobs.get(id))) return false;
      await scheduler.setEnabled(id, enabled);
      return true;
    },
    remove: (id) => jobs.delete(id),
    reschedule: async (id, changes) => {
      if (!(await jobs.get(id))) return undefined;
      const { schedule, tz, enabled } = changes;
      return summary(await scheduler.update(id, { ...(schedule === undefined ? {} : { cron: schedule }), ...(tz === undefined ? {} : { tz }), enabled }));
    },
  };
}
