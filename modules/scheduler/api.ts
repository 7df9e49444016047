/**
 * Contract of the scheduler module: jobs other modules create and own (a hand's schedules). A job made here is the
 * same job /api/schedules and /api/cron/jobs show; `via` records who made it.
 */
import { AsyncSeriesBailHook, defineEvents, defineHooks, payload, serviceRef } from '@talon/module-sdk';

/** What a module asks for: the fields of POST /api/schedules it needs. */
export interface JobRequest {
  name: string;
  /** The agent's UUID. */
  agentId: string;
  /** A 5-field cron expression, "every 5m" or "at <ISO time>" (the API's forms). */
  schedule: string;
  /** IANA time zone of a cron expression; default UTC. */
  tz?: string;
  /** The agent's message; for a handler job, the handler's input. */
  prompt: string;
  enabled?: boolean;
  /** The session of the job's turns: 'new' (fresh each run) or 'persistent'; default the agent manifest's. */
  sessionMode?: 'persistent' | 'new';
  /** Run this module handler (a tap of schedulerHooks.handler) instead of an agent turn; agentId says whom it concerns. */
  handler?: string;
}

/** What a handler gets when its job runs. */
export interface HandlerRun {
  /** The handler the job names: a tap answers only for its own. */
  handler: string;
  jobId: string;
  name: string;
  agentId: string | null;
  /** The job's prompt. */
  input: string;
}

export interface JobSummary {
  id: string;
  name: string;
  agent_id: string | null;
  schedule: string;
  handler: string | null;
  enabled: boolean;
  next_run: string | null;
  last_run: string | null;
  run_count: number;
}

export interface SchedulerJobs {
  /** Validates like the API (rejects with HttpError 400/404/409 naming the problem). */
  create(request: JobRequest, via: string): Promise<JobSummary>;
  get(id: string): Promise<JobSummary | undefined>;
  /** Enables or disables a job; false when there is no such job. */
  setEnabled(id: string, enabled: boolean): Promise<boolean>;
  /** False when there was no such job. */
  remove(id: string): Promise<boolean>;
  /** Changes when a job runs (validated like the API); undefined when there is no such job. */
  reschedule(id: string, changes: { schedule?: string; tz?: string; enabled?: boolean }): Promise<JobSummary | undefined>;
}

/** A handler's outcome: the result text (kept as the job's last result), or the error of a failed run. */
export type HandlerOutcome = { ok: true; result: string } | { ok: false; error: string };

export const schedulerHooks = defineHooks('scheduler.hooks', () => ({
  /**
   * Runs a job that names a module handler. A tap answers for its own handler name and undefined for any other; a
   * job nobody answers fails, saying so. A tap lives and goes with the copy of the module that made it, so reloads
   * of either module keep jobs running.
   */
  handler: new AsyncSeriesBailHook<[HandlerRun], HandlerOutcome | undefined>(['job']),
}));

export const schedulerJobs = serviceRef<SchedulerJobs>('scheduler.jobs');

export const scheduleEvents = defineEvents('scheduler', {
  'schedule.fired': payload<{ jobId: string; name: string; agentId?: string; status: string }>(),
});
