/**
 * Workflow runs in SQLite. Every transition is written when it happens (Pending at creation, Running, each step,
 * the end), so after a crash the rows say what was under way; start-up marks those Failed.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';

export type RunState = 'Pending' | 'Running' | 'Completed' | 'Failed' | 'Cancelled';

export interface StepRecord {
  step_index: number;
  step_name: string;
  iteration: number | null;
  agent_id: string | null;
  agent_name: string | null;
  status: 'completed' | 'failed' | 'skipped';
  prompt: string | null;
  output: string | null;
  error: string | null;
  attempts: number;
  started_at: string;
  duration_ms: number;
  input_tokens: number;
  output_tokens: number;
}

export interface RunRow {
  id: string;
  workflow_id: string;
  workflow_name: string;
  state: RunState;
  input: string;
  output: string | null;
  error: string | null;
  origin: string;
  steps_completed: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

const RUN_COLUMNS = 'id, workflow_id, workflow_name, state, input, output, error, origin, steps_completed, created_at, started_at, completed_at';

export class RunStore {
  private readonly sql: ReturnType<typeof statements>;

  /** A step's row and the run's count in one commit (a step costs one write, not two). */
  private readonly recordStep: (runId: string, r: StepRecord) => void;

  constructor(
    db: Database,
    private readonly boot: string,
  ) {
    this.sql = statements(db);
    this.recordStep = db.transaction((runId: string, r: StepRecord) => this.writeStep(runId, r));
  }

  create(workflow: { id: string; name: string }, input: string, origin: string): string {
    const id = randomUUID();
    this.sql("INSERT INTO workflows_runs (id, workflow_id, workflow_name, state, input, origin, boot, created_at) VALUES (?, ?, ?, 'Pending', ?, ?, ?, ?)").run(
      id,
      workflow.id,
      workflow.name,
      input,
      origin,
      this.boot,
      now(),
    );
    return id;
  }

  start(runId: string): void {
    this.sql("UPDATE workflows_runs SET state = 'Running', started_at = ? WHERE id = ? AND state = 'Pending'").run(now(), runId);
  }

  step(runId: string, r: StepRecord): void {
    this.recordStep(runId, r);
  }

  private writeStep(runId: string, r: StepRecord): void {
    this.sql(
      `INSERT INTO workflows_run_steps (run_id, step_index, step_name, iteration, agent_id, agent_name, status, prompt, output, error, attempts,
       started_at, duration_ms, input_tokens, output_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      runId,
      r.step_index,
      r.step_name,
      r.iteration,
      r.agent_id,
      r.agent_name,
      r.status,
      r.prompt,
      r.output,
      r.error,
      r.attempts,
      r.started_at,
      Math.round(r.duration_ms),
      r.input_tokens,
      r.output_tokens,
    );
    if (r.status === 'completed') this.sql('UPDATE workflows_runs SET steps_completed = steps_completed + 1 WHERE id = ?').run(runId);
  }

  /** Ends a run that is still open; false when it had already ended. */
  finish(runId: string, state: 'Completed' | 'Failed' | 'Cancelled', output: string | null, error: string | null): boolean {
    return (
      this.sql("UPDATE workflows_runs SET state = ?, output = ?, error = ?, completed_at = ? WHERE id = ? AND state IN ('Pending', 'Running')").run(
        state,
        output,
        error,
        now(),
        runId,
      ).changes > 0
    );
  }

  /** Runs an earlier process left open were interrupted: they become Failed, with the reason. */
  failInterrupted(): number {
    return this.sql(
      `UPDATE workflows_runs SET state = 'Failed', completed_at = ?,
       error = 'interrupted: the service stopped while the run was in progress (' || state || ' at the restart)'
       WHERE state IN ('Pending', 'Running') AND boot <> ?`,
    ).run(now(), this.boot).changes;
  }

  get(runId: string): RunRow | undefined {
    return this.sql<[string], RunRow>(`SELECT ${RUN_COLUMNS} FROM workflows_runs WHERE id = ?`).get(runId);
  }

  steps(runId: string): StepRecord[] {
    return this.sql<[string], StepRecord>(
      `SELECT step_index, step_name, iteration, agent_id, agent_name, status, prompt, output, error, attempts, started_at, duration_ms,
       input_tokens, output_tokens FROM workflows_run_steps WHERE run_id = ? ORDER BY step_index, iteration, seq`,
    ).all(runId);
  }

  /** A workflow's runs, newest first. */
  list(workflowId: string, limit: number, offset: number): RunRow[] {
    return this.sql<[string, number, number], RunRow>(`SELECT ${RUN_COLUMNS} FROM workflows_runs WHERE workflow_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`).all(
      workflowId,
      limit,
      offset,
    );
  }

  /** Keeps the newest `keep` finished runs of a workflow. */
  prune(workflowId: string, keep: number): void {
    this.sql(
      `DELETE FROM workflows_runs WHERE workflow_id = ? AND state NOT IN ('Pending', 'Running') AND seq <= (
         SELECT seq FROM workflows_runs WHERE workflow_id = ? AND state NOT IN ('Pending', 'Running') ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
    ).run(workflowId, workflowId, keep);
  }
}

const now = () => new Date().toISOString();
