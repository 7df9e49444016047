/** How jobs look in answers: one record for both views, so a job made through either reads the same in both. */
import type { JobRow } from './jobs.ts';
import type { RunRow } from './runs.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The last run's result and the next scheduled time (GET /api/cron/jobs/{id}/status). */
export function jobStatus(job: JobRow) {
  return {
    id: job.id,
    name: job.name,
    enabled: job.enabled === 1,
    auto_disabled: job.auto_disabled === 1,
    disabled_reason: job.disabled_reason,
    next_run: iso(job.next_run),
    last_run: iso(job.last_run),
    last_status: job.last_status,
    last_result: job.last_result,
    last_error: job.last_error,
    consecutive_failures: job.consecutive_failures,
    run_count: job.run_count,
  };
}

export function jobView(job: JobRow) {
  return {
    ...jobStatus(job),
    agent_id: job.agent_id,
    workflow_id: job.workflow_id,
    handler: job.handler,
    schedule: job.schedule,
    cron: job.schedule,
    kind: job.kind,
    tz: job.tz,
    prompt: job.prompt,
    message: job.prompt,
    one_shot: job.one_shot === 1,
    session_mode: job.session_mode,
    misfire_policy: job.misfire_policy,
    timeout_secs: job.timeout_secs,
    created_at: job.created_at,
    updated_at: job.updated_at,
  };
}

/** A run (GET /api/schedules/{id}/runs): a scheduled one names its slot; a manual one (POST …/run) has none. */
export function runView(run: RunRow) {
  return {
    id: run.id,
    slot: iso(run.slot),
    manual: run.slot === null,
    node: run.node,
    state: run.state,
    started_at: new Date(run.started_at).toISOString(),
    finished_at: iso(run.finished_at),
    error: run.error,
  };
}
