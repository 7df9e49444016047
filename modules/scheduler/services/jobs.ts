/**
 * The job table. A due job is claimed by one conditional UPDATE that moves next_run on before anything runs: of
 * two claimers (two ticks, two nodes on one database) only the one whose UPDATE still sees the old next_run wins.
 */
import { randomUUID } from 'node:crypto';
import type { Queries, Store } from '@talon/module-sdk';
import type { SessionMode } from '@talon/tasks';
import type { MisfirePolicy } from '../config.ts';
import type { Kind } from './spec.ts';

export interface JobRow {
  id: string;
  name: string;
  agent_id: string | null;
  workflow_id: string | null;
  /** A module's handler the job runs (scheduler.jobs), instead of an agent turn or a workflow. */
  handler: string | null;
  schedule: string;
  kind: Kind;
  tz: string;
  prompt: string;
  enabled: number;
  one_shot: number;
  session_mode: SessionMode | null;
  misfire_policy: MisfirePolicy | null;
  timeout_secs: number | null;
  anchor: number;
  next_run: number | null;
  last_run: number | null;
  last_status: string | null;
  last_result: string | null;
  last_error: string | null;
  consecutive_failures: number;
  auto_disabled: number;
  disabled_reason: string | null;
  run_count: number;
  created_via: string;
  created_at: string;
  updated_at: string;
}

/** The columns a create or an update writes. */
export type JobFields = Pick<
  JobRow,
  | 'name'
  | 'agent_id'
  | 'workflow_id'
  | 'handler'
  | 'schedule'
  | 'kind'
  | 'tz'
  | 'prompt'
  | 'enabled'
  | 'one_shot'
  | 'session_mode'
  | 'misfire_policy'
  | 'timeout_secs'
  | 'anchor'
  | 'next_run'
>;

const FIELDS = [
  'name',
  'agent_id',
  'workflow_id',
  'handler',
  'schedule',
  'kind',
  'tz',
  'prompt',
  'enabled',
  'one_shot',
  'session_mode',
  'misfire_policy',
  'timeout_secs',
  'anchor',
  'next_run',
] as const;
const MAX_RESULT = 2000;

export interface Outcome {
  ok: boolean;
  /** The reply (ok) or the error message. */
  text: string;
  at: number;
}

/** How a scheduled run's outcome moves the job on (a manual run leaves its schedule alone). */
export interface Scheduled {
  backoffMs: number;
  maxFailures: number;
  oneShot: boolean;
}

const COLUMNS = 'SELECT * FROM scheduler_jobs';

export class JobStore {
  constructor(private readonly store: Store) {}

  async create(fields: JobFields, via: string): Promise<JobRow> {
    const id = randomUUID();
    const at = new Date().toISOString();
    await this.store.run(
      `INSERT INTO scheduler_jobs (id, ${FIELDS.join(', ')}, created_via, created_at, updated_at) VALUES (?, ${FIELDS.map(() => '?').join(', ')}, ?, ?, ?)`,
      [id, ...FIELDS.map((f) => fields[f]), via, at, at],
    );
    return (await this.get(id))!;
  }

  /** Writes the fields; a change of enabled or of the schedule clears the failure state. */
  async update(id: string, fields: JobFields, resetFailures: boolean): Promise<JobRow> {
    const reset = resetFailures ? ', consecutive_failures = 0, auto_disabled = 0, disabled_reason = NULL' : '';
    await this.store.run(`UPDATE scheduler_jobs SET ${FIELDS.map((f) => `${f} = ?`).join(', ')}, updated_at = ?${reset} WHERE id = ?`, [
      ...FIELDS.map((f) => fields[f]),
      new Date().toISOString(),
      id,
    ]);
    return (await this.get(id))!;
  }

  get(id: string, q: Queries = this.store): Promise<JobRow | undefined> {
    return q.one<JobRow>(`${COLUMNS} WHERE id = ?`, [id]);
  }

  list(agentId?: string): Promise<JobRow[]> {
    return agentId ? this.store.many<JobRow>(`${COLUMNS} WHERE agent_id = ? ORDER BY seq`, [agentId]) : this.store.many<JobRow>(`${COLUMNS} ORDER BY seq`);
  }

  async delete(id: string): Promise<boolean> {
    return (await this.store.run('DELETE FROM scheduler_jobs WHERE id = ?', [id])).changes > 0;
  }

  /** Enabled jobs due at `now`, oldest slot first. */
  due(now: number, limit: number): Promise<JobRow[]> {
    return this.store.many<JobRow>(`${COLUMNS} WHERE enabled = 1 AND next_run <= ? ORDER BY next_run LIMIT ?`, [now, limit]);
  }

  /** The earliest next_run of an enabled job, or null. */
  async earliest(): Promise<number | null> {
    const row = await this.store.one<{ t: number | null }>('SELECT MIN(next_run) AS t FROM scheduler_jobs WHERE enabled = 1');
    return row?.t ?? null;
  }

  /** Moves a due job's next_run on (in the claim's transaction); true when this caller won the claim. */
  async claim(t: Queries, id: string, seen: number, next: number | null): Promise<boolean> {
    return (await t.run('UPDATE scheduler_jobs SET next_run = ? WHERE id = ? AND next_run = ? AND enabled = 1', [next, id, seen])).changes === 1;
  }

  /** Records a run. A scheduled failure pushes next_run back (backoff) or disables the job at the limit. */
  async recordOutcome(t: Queries, id: string, o: Outcome, scheduled: Scheduled | undefined): Promise<void> {
    const text = o.text.slice(0, MAX_RESULT);
    const status = o.ok ? 'ok' : 'error';
    if (!scheduled) {
      // A manual run (POST …/run) shows as the last run but leaves the schedule and the failure count alone.
      await t.run('UPDATE scheduler_jobs SET last_run = ?, last_status = ?, last_result = ?, last_error = ?, run_count = run_count + 1 WHERE id = ?', [
        o.at,
        status,
        o.ok ? text : null,
        o.ok ? null : text,
        id,
      ]);
      return;
    }
    if (o.ok) {
      const done = scheduled.oneShot ? ", enabled = 0, next_run = NULL, disabled_reason = 'one-shot job: it ran'" : '';
      await t.run(
        `UPDATE scheduler_jobs SET last_run = ?, last_status = 'ok', last_result = ?, last_error = NULL, consecutive_failures = 0, run_count = run_count + 1${done} WHERE id = ?`,
        [o.at, text, id],
      );
      return;
    }
    await t.run(
      "UPDATE scheduler_jobs SET last_run = ?, last_status = 'error', last_error = ?, consecutive_failures = consecutive_failures + 1, run_count = run_count + 1 WHERE id = ?",
      [o.at, text, id],
    );
    const job = await this.get(id, t);
    if (!job) return;
    if (job.consecutive_failures >= scheduled.maxFailures) {
      const reason = `disabled after ${job.consecutive_failures} consecutive failures; the last: ${text.slice(0, 300)}`;
      await t.run('UPDATE scheduler_jobs SET enabled = 0, auto_disabled = 1, next_run = NULL, disabled_reason = ? WHERE id = ?', [reason, id]);
    } else if (job.enabled) {
      // Retry no sooner than the backoff; a one-shot (no next slot) retries at the backoff.
      await t.run('UPDATE scheduler_jobs SET next_run = ? WHERE id = ?', [Math.max(job.next_run ?? 0, o.at + scheduled.backoffMs), id]);
    }
  }

  /** A run that was not made (misfire policy skip, the previous run still going): say so in the status. */
  async recordSkip(t: Queries, id: string, at: number, why: string): Promise<void> {
    await t.run("UPDATE scheduler_jobs SET last_status = 'skipped', last_error = ? WHERE id = ?", [`${why} (${new Date(at).toISOString()})`, id]);
  }

  /**
   * A run lost with its node (taken over and not run again: by the misfire policy, or a manual one): the status says
   * so, and an `at` job, whose only slot it was, is disabled saying why, rather than left enabled with nothing to run.
   */
  async recordLost(t: Queries, id: string, slot: number | null, why: string, lastSlot: boolean): Promise<void> {
    const error = `${slot === null ? 'a manual run' : `the run for ${new Date(slot).toISOString()}`} was lost: ${why}`;
    await t.run("UPDATE scheduler_jobs SET last_status = 'lost', last_error = ? WHERE id = ?", [error, id]);
    if (lastSlot) await t.run('UPDATE scheduler_jobs SET enabled = 0, next_run = NULL, disabled_reason = ? WHERE id = ?', [`one-shot job: ${error}`, id]);
  }

  /** Stops one job, saying why. */
  async disable(t: Queries, id: string, reason: string): Promise<void> {
    await t.run('UPDATE scheduler_jobs SET enabled = 0, next_run = NULL, disabled_reason = ?, updated_at = ? WHERE id = ?', [
      reason,
      new Date().toISOString(),
      id,
    ]);
  }

  /** Jobs of a killed agent or a deleted workflow stop (disabled with the reason, or deleted). */
  async retire(column: 'agent_id' | 'workflow_id', value: string, reason: string, remove: boolean): Promise<number> {
    if (remove) return (await this.store.run(`DELETE FROM scheduler_jobs WHERE ${column} = ?`, [value])).changes;
    const { changes } = await this.store.run(
      `UPDATE scheduler_jobs SET enabled = 0, next_run = NULL, disabled_reason = ?, updated_at = ? WHERE ${column} = ? AND enabled = 1`,
      [reason, new Date().toISOString(), value],
    );
    return changes;
  }
}
