/**
 * Contract of the scheduler module: jobs other modules create and own (a hand's schedules). A job made here is the
 * same job /api/schedules and /api/cron/jobs show; `via` records who made it.
 */
import { serviceRef } from '@talon/module-sdk';

/** What a module asks for: the fields of POST /api/schedules it needs. */
export interface JobRequest {
  name: string;
  /** The agent's UUID. */
  agentId: string;
  /** A 5-field cron expression, "every 5m" or "at <ISO time>" (the API's forms). */
  schedule: string;
  /** IANA time zone of a cron expression; default UTC. */
  tz?: string;
  prompt: string;
  enabled?: boolean;
}

export interface JobSummary {
  id: string;
  name: string;
  agent_id: string | null;
  schedule: string;
  enabled: boolean;
  next_run: string | null;
  last_run: string | null;
  run_count: number;
}

export interface SchedulerJobs {
  /** Validates like the API (HttpError 400/404/409 naming the problem). */
  create(request: JobRequest, via: string): JobSummary;
  get(id: string): JobSummary | undefined;
  /** Enables or disables a job; false when there is no such job. */
  setEnabled(id: string, enabled: boolean): boolean;
  /** False when there was no such job. */
  remove(id: string): boolean;
}

export const schedulerJobs = serviceRef<SchedulerJobs>('scheduler.jobs');
