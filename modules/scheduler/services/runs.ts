/**
 * The run rows (scheduler_runs): inserted by the claim, in its transaction, one per slot it runs, or by a manual run
 * (no slot); ended by the node that ran them, in one transaction with the job's outcome; taken over, one conditional
 * UPDATE each, when their node is gone. "The previous run is still going" is a running scheduled row of the job,
 * whichever node runs it.
 */
import { randomUUID } from 'node:crypto';
import type { Queries, Store } from '@talon/module-sdk';

export type RunState = 'running' | 'ok' | 'error' | 'lost';

export interface RunRow {
  id: string;
  job_id: string;
  /** The scheduled time the run is for; null: a manual run (POST …/run). */
  slot: number | null;
  node: string;
  lease_until: number;
  state: RunState;
  started_at: number;
  finished_at: number | null;
  error: string | null;
}

/** A scheduled run this node is to execute (claimed, or taken over). */
export interface Claimed {
  id: string;
  slot: number;
}

/** A run this node executes: a scheduled one, or a manual one (no slot). */
export type Held = Claimed | { id: string; slot: null };

const COLUMNS = 'id, job_id, slot, node, lease_until, state, started_at, finished_at, error';
/** Ended runs kept per job (the newest). */
const KEPT = 100;

export class RunRows {
  constructor(private readonly store: Store) {}

  /** Whether a scheduled run of the job is under way on any node (a manual run never makes a slot skip). */
  async running(t: Queries, jobId: string): Promise<boolean> {
    return (await t.one("SELECT 1 AS x FROM scheduler_runs WHERE job_id = ? AND state = 'running' AND slot IS NOT NULL LIMIT 1", [jobId])) !== undefined;
  }

  /** Inserts the claimed slots' runs for this node; a slot that already has a run (a re-anchored schedule) is left out. */
  async insert(t: Queries, jobId: string, slots: readonly number[], node: string, leaseUntil: number, at: number): Promise<Claimed[]> {
    const claimed: Claimed[] = [];
    for (const slot of slots) {
      const row = await t.one<{ id: string }>(
        `INSERT INTO scheduler_runs (id, job_id, slot, node, lease_until, state, started_at) VALUES (?, ?, ?, ?, ?, 'running', ?)
         ON CONFLICT (job_id, slot) DO NOTHING RETURNING id`,
        [randomUUID(), jobId, slot, node, leaseUntil, at],
      );
      if (row) claimed.push({ id: row.id, slot });
    }
    return claimed;
  }

  /** A manual run's row (POST …/run), held by this node while it runs, so the history shows it like a scheduled one. */
  async insertManual(jobId: string, node: string, leaseUntil: number, at: number): Promise<Held> {
    const id = randomUUID();
    await this.store.run("INSERT INTO scheduler_runs (id, job_id, slot, node, lease_until, state, started_at) VALUES (?, ?, NULL, ?, ?, 'running', ?)", [
      id,
      jobId,
      node,
      leaseUntil,
      at,
    ]);
    return { id, slot: null };
  }

  /** Ends a run this node holds; false when it no longer does (taken over meanwhile): then it records nothing. */
  async end(t: Queries, runId: string, node: string, state: 'ok' | 'error', error: string | null, at: number): Promise<boolean> {
    const { changes } = await t.run("UPDATE scheduler_runs SET state = ?, error = ?, finished_at = ? WHERE id = ? AND node = ? AND state = 'running'", [
      state,
      error,
      at,
      runId,
      node,
    ]);
    return changes === 1;
  }

  /** Keeps the newest ended runs of a job. */
  async prune(t: Queries, jobId: string): Promise<void> {
    await t.run(
      `DELETE FROM scheduler_runs WHERE job_id = ? AND state <> 'running' AND seq <= (
         SELECT seq FROM scheduler_runs WHERE job_id = ? AND state <> 'running' ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      [jobId, jobId, KEPT],
    );
  }

  /** The runs this node holds stay leased while it runs them. */
  async renew(node: string, leaseUntil: number): Promise<void> {
    await this.store.run("UPDATE scheduler_runs SET lease_until = ? WHERE node = ? AND state = 'running'", [leaseUntil, node]);
  }

  /** The running runs of a node, oldest slot first. */
  heldBy(node: string): Promise<RunRow[]> {
    return this.store.many<RunRow>(`SELECT ${COLUMNS} FROM scheduler_runs WHERE node = ? AND state = 'running' ORDER BY job_id, slot`, [node]);
  }

  /** Nodes that hold running runs. */
  async holders(): Promise<string[]> {
    return (await this.store.many<{ node: string }>("SELECT DISTINCT node FROM scheduler_runs WHERE state = 'running'")).map((r) => r.node);
  }

  /** Takes a gone node's run over to run it again here: one conditional UPDATE; true when this node won it. */
  async adopt(runId: string, from: string, to: string, leaseUntil: number, at: number): Promise<boolean> {
    const { changes } = await this.store.run(
      "UPDATE scheduler_runs SET node = ?, lease_until = ?, started_at = ? WHERE id = ? AND node = ? AND state = 'running'",
      [to, leaseUntil, at, runId, from],
    );
    return changes === 1;
  }

  /** Marks a gone node's run lost, with why: one conditional UPDATE; true when this node won it. */
  async lose(t: Queries, runId: string, from: string, why: string, at: number): Promise<boolean> {
    const { changes } = await t.run("UPDATE scheduler_runs SET state = 'lost', error = ?, finished_at = ? WHERE id = ? AND node = ? AND state = 'running'", [
      why,
      at,
      runId,
      from,
    ]);
    return changes === 1;
  }

  /** A job's runs, newest first. */
  list(jobId: string, limit: number, offset: number): Promise<RunRow[]> {
    return this.store.many<RunRow>(`SELECT ${COLUMNS} FROM scheduler_runs WHERE job_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`, [jobId, limit, offset]);
  }
}
