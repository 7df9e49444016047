/**
 * Contract of the workflows module: schedules and triggers start workflow runs through the runner.
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';

export type RunStatus = 'completed' | 'failed' | 'cancelled';

/** What POST /api/workflows/{id}/run answers, and what the runner resolves to. */
export interface WorkflowRunResult {
  run_id: string;
  output: string;
  status: RunStatus;
  /** Why the run failed or was cancelled. */
  error?: string;
}

/** A run start() began: its row is committed (Pending) by the time this is answered. */
export interface StartedRun {
  run_id: string;
  /**
   * Resolves as run() does, when the run ends (on whichever process executes it). For a run this copy does not execute
   * (a key that found one begun by another process), rejects with HttpError 409 when this module copy stops first (reload, disable, shutdown):
   * the run goes on there, but no one here follows it any more.
   */
  done: Promise<WorkflowRunResult>;
}

export interface WorkflowRunner {
  /** A workflow by UUID, else by name (case-insensitive; the oldest of that name). */
  find(ref: string): Promise<{ id: string; name: string } | undefined>;
  /**
   * Runs a workflow to its end (never rejects for a failing step: the result says `failed`). Rejects with HttpError
   * 404 when the workflow does not exist. `origin` is kept on the run ('http', 'schedule', 'trigger').
   */
  run(ref: string, input: string, origin: string): Promise<WorkflowRunResult>;
  /**
   * Starts a run and answers once its row is committed, without waiting for its end: from then on the run is this
   * module's (a caller that dies does not take it along; the process executing it dying fails it as interrupted).
   * `key` is an idempotency key: while a run with that key is kept, start answers that run (its `done` resolves when
   * it ends, wherever it ran) instead of starting another, so a caller that took over a dead process's work finds
   * the run that process had started. Rejects with HttpError 404 when the workflow does not exist.
   */
  start(ref: string, input: string, origin: string, key?: string): Promise<StartedRun>;
}

export const workflowRunner = serviceRef<WorkflowRunner>('workflows.runner');

export const workflowEvents = defineEvents('workflows', {
  'workflow.run_finished': payload<{ workflowId: string; workflowName: string; runId: string; status: string; error?: string }>(),
  /** A workflow was deleted: schedules and triggers that start it stop doing so. */
  'workflow.deleted': payload<{ workflowId: string; name: string }>(),
});
