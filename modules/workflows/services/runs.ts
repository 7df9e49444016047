/**
 * Workflow runs in the store. Every transition is written when it happens (Pending at creation, Running, each step,
 * the end), so after a crash the rows say what was under way. Each run records the node executing it: when a node is
 * gone (at start, or when its heartbeat stops) its open runs are marked Failed; other live nodes' runs are left alone.
 */
import { randomUUID } from 'node:crypto';
import { WriteBehind, type ChangeFeed, type Queries, type Store } from '@talon/module-sdk';

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
  /** The node executing it (null: written before runs recorded their node). */
  node: string | null;
}

const RUN_COLUMNS = 'id, workflow_id, workflow_name, state, input, output, error, origin, steps_completed, created_at, started_at, completed_at, node';
const OPEN = "('Pending', 'Running')";
/** The change-feed topic noted when runs end, for callers waiting elsewhere: the run id, '' for a gone node's runs. */
export const ENDED_TOPIC = 'ended';
const INTERRUPTED = "'interrupted: the service stopped while the run was in progress (' || state || ' at the restart)'";

export interface RunStoreDeps {
  store: Store;
  changes: Pick<ChangeFeed, 'note'>;
  /** This process's node id: written on the runs it executes. */
  node: string;
  /** The process run (pid and start time), kept in the boot column as before. */
  boot: string;
  onStepLost: (err: unknown, rows: number) => void;
}

export class RunStore {
  private readonly store: Store;
  /**
   * Step rows are written just after the step (write-behind, one commit for the step's row and the run's count): the
   * walkers record steps synchronously, and a run's end, and every read, flushes them first.
   */
  private readonly stepRows: WriteBehind<{ runId: string; record: StepRecord }>;

  constructor(private readonly deps: RunStoreDeps) {
    this.store = deps.store;
    this.stepRows = new WriteBehind(
      this.store,
      (t, { runId, record }) => writeStep(t, runId, record),
      (err, rows) => deps.onStepLost(err, rows.length),
    );
  }

  /** Inserts a Pending run; with a key already kept, inserts nothing and answers that run's id (created false). */
  async create(workflow: { id: string; name: string }, input: string, origin: string, key?: string): Promise<{ id: string; created: boolean }> {
    return this.store.tx(async (t) => {
      const inserted = await t.one<{ id: string }>(
        `INSERT INTO workflows_runs (id, workflow_id, workflow_name, state, input, origin, boot, node, created_at, key)
         VALUES (?, ?, ?, 'Pending', ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING id`,
        [randomUUID(), workflow.id, workflow.name, input, origin, this.deps.boot, this.deps.node, now(), key ?? null],
      );
      if (inserted) return { id: inserted.id, created: true };
      const existing = await t.one<{ id: string }>('SELECT id FROM workflows_runs WHERE key = ?', [key ?? null]);
      return { id: existing!.id, created: false };
    });
  }

  async start(runId: string): Promise<void> {
    await this.store.run("UPDATE workflows_runs SET state = 'Running', started_at = ? WHERE id = ? AND state = 'Pending'", [now(), runId]);
  }

  step(runId: string, record: StepRecord): void {
    this.stepRows.push({ runId, record });
  }

  /** Ends a run that is still open; false when it had already ended (its steps are written first). */
  async finish(runId: string, state: 'Completed' | 'Failed' | 'Cancelled', output: string | null, error: string | null): Promise<boolean> {
    await this.stepRows.flush();
    return this.store.tx(async (t) => {
      const { changes } = await t.run(`UPDATE workflows_runs SET state = ?, output = ?, error = ?, completed_at = ? WHERE id = ? AND state IN ${OPEN}`, [
        state,
        output,
        error,
        now(),
        runId,
      ]);
      if (changes) await this.deps.changes.note(ENDED_TOPIC, runId, t);
      return changes > 0;
    });
  }

  /** The open runs of a node that is gone were interrupted: Failed, with the reason (one UPDATE; one live node wins). */
  async failInterrupted(node: string): Promise<number> {
    return this.failOpen('node = ?', [node]);
  }

  /** At start: open runs of nodes not live (and of processes that recorded no node) are failed; answers how many. */
  async failOrphans(live: ReadonlySet<string>): Promise<number> {
    let failed = await this.failOpen('node IS NULL', []);
    const nodes = await this.store.many<{ node: string }>(`SELECT DISTINCT node FROM workflows_runs WHERE state IN ${OPEN} AND node IS NOT NULL`);
    for (const { node } of nodes) if (!live.has(node)) failed += await this.failInterrupted(node);
    return failed;
  }

  /** Open runs matching `where` are Failed as interrupted, noted as ended (one UPDATE: one live node wins). */
  private failOpen(where: string, params: string[]): Promise<number> {
    return this.store.tx(async (t) => {
      const { changes } = await t.run(
        `UPDATE workflows_runs SET state = 'Failed', completed_at = ?, error = ${INTERRUPTED} WHERE state IN ${OPEN} AND ${where}`,
        [now(), ...params],
      );
      if (changes) await this.deps.changes.note(ENDED_TOPIC, '', t);
      return changes;
    });
  }

  async get(runId: string): Promise<RunRow | undefined> {
    await this.stepRows.flush();
    return this.store.one<RunRow>(`SELECT ${RUN_COLUMNS} FROM workflows_runs WHERE id = ?`, [runId]);
  }

  async steps(runId: string): Promise<StepRecord[]> {
    await this.stepRows.flush();
    return this.store.many<StepRecord>(
      `SELECT step_index, step_name, iteration, agent_id, agent_name, status, prompt, output, error, attempts, started_at, duration_ms,
       input_tokens, output_tokens FROM workflows_run_steps WHERE run_id = ? ORDER BY step_index, iteration, seq`,
      [runId],
    );
  }

  /** A workflow's runs, newest first. */
  async list(workflowId: string, limit: number, offset: number): Promise<RunRow[]> {
    await this.stepRows.flush();
    return this.store.many<RunRow>(`SELECT ${RUN_COLUMNS} FROM workflows_runs WHERE workflow_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`, [
      workflowId,
      limit,
      offset,
    ]);
  }

  /** Keeps the newest `keep` finished runs of a workflow. */
  async prune(workflowId: string, keep: number): Promise<void> {
    await this.store.run(
      `DELETE FROM workflows_runs WHERE workflow_id = ? AND state NOT IN ${OPEN} AND seq <= (
         SELECT seq FROM workflows_runs WHERE workflow_id = ? AND state NOT IN ${OPEN} ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      [workflowId, workflowId, keep],
    );
  }

  /** The module stops: step rows still waiting are written. */
  flush(): Promise<void> {
    return this.stepRows.flush();
  }
}

/** A step's row and the run's count, in the write-behind's transaction. */
async function writeStep(t: Queries, runId: string, r: StepRecord): Promise<void> {
  await t.run(
    `INSERT INTO workflows_run_steps (run_id, step_index, step_name, iteration, agent_id, agent_name, status, prompt, output, error, attempts,
     started_at, duration_ms, input_tokens, output_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
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
    ],
  );
  if (r.status === 'completed') await t.run('UPDATE workflows_runs SET steps_completed = steps_completed + 1 WHERE id = ?', [runId]);
}

const now = () => new Date().toISOString();
