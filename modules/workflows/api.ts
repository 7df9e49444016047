/**
 * Contract of the workflows module: schedules and triggers start workflow runs through the runner.
 */
import { serviceRef } from '@talon/module-sdk';

export type RunStatus = 'completed' | 'failed' | 'cancelled';

/** What POST /api/workflows/{id}/run answers, and what the runner resolves to. */
export interface WorkflowRunResult {
  run_id: string;
  output: string;
  status: RunStatus;
  /** Why the run failed or was cancelled. */
  error?: string;
}

export interface WorkflowRunner {
  /** A workflow by UUID, else by name (case-insensitive; the oldest of that name). */
  find(ref: string): Promise<{ id: string; name: string } | undefined>;
  /**
   * Runs a workflow to its end (never rejects for a failing step: the result says `failed`). Rejects with HttpError
   * 404 when the workflow does not exist. `origin` is kept on the run ('http', 'schedule', 'trigger').
   */
  run(ref: string, input: string, origin: string): Promise<WorkflowRunResult>;
}

export const workflowRunner = serviceRef<WorkflowRunner>('workflows.runner');

declare module '@talon/module-sdk' {
  interface TalonEvents {
    /** A workflow was deleted: schedules and triggers that start it stop doing so. */
    'workflow.deleted': { workflowId: string; name: string };
  }
}
