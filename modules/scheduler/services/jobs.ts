/**
 * The job table. A due job is claimed by one conditional UPDATE that moves next_run on before anything runs: of
 * two claimers (two ticks, two nodes on one database) only the one whose UPDATE still sees the old next_run wins.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';
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

export class JobStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: Database) {
    this.sql = statements(db);
  }

  create(fields: JobFields, via: string): JobRow {
    const id = randomUUID();
    const at = new Date().toISOString();
    this.sql(
      `INSERT INTO scheduler_jobs (id, ${FIELDS.join(', ')}, created_via, created_at, updated_at) VALUES (?, ${FIELDS.map(() => '?').join(', ')}, ?, ?, ?)`,
    ).run(id, ...FIELDS.map((f) => fields[f]), via, at, at);
    return this.get(id)!;
  }

  /** Writes the fields; a change of enabled or of the schedule clears the failure state. */
  update(id: string, fields: JobFields, resetFailures: boolean): JobRow {
    const reset = resetFailures ? ', consecutive_failures = 0, auto_disabled = 0, disabled_reason = NULL' : '';
    this.sql(`UPDATE scheduler_jobs SET ${FIELDS.map((f) => `${f} = ?`).join(', ')}, updated_at = ?${reset} WHERE id = ?`).run(
      ...FIELDS.map((f) => fields[f]),
      new Date().toISOString(),
      id,
    );
    return this.get(id)!;
  }

  get(id: string): JobRow | undefined {
    return this.sql<[string], JobRow>('SELECT * FROM scheduler_jobs WHERE id = ?').get(id);
  }

  list(agentId?: string): JobRow[] {
    return agentId
      ? this.sql<[string], JobRow>('SELECT * FROM scheduler_jobs WHERE agent_id = ? ORDER BY seq').all(agentId)
      : this.sql<[], JobRow>('SELECT * FROM scheduler_jobs ORDER BY seq').all();
  }

  delete(id: string): boolean {
    return this.sql('DELETE FROM scheduler_jobs WHERE id = ?').run(id).changes > 0;
  }

  /** Enabled jobs due at `now`, oldest slot first. */
  due(now: number, limit: number): JobRow[] {
    return this.sql<[number, number], JobRow>('SELECT * FROM scheduler_jobs WHERE enabled = 1 AND next_run <= ? ORDER BY next_run LIMIT ?').all(now, limit);
  }

  /** The earliest next_run of an enabled job, or null. */
  earliest(): number | null {
    return this.sql<[], { t: number | null }>('SELECT MIN(next_run) AS t FROM scheduler_jobs WHERE enabled = 1').get()!.t;
  }

  /** Runs fn in one transaction (a batch of claims is one commit, not one each). */
  batch<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Moves a due job's next_run on; true when this caller won the claim. */
  claim(id: string, seen: number, next: number | null): boolean {
    return this.sql('UPDATE scheduler_jobs SET next_run = ? WHERE id = ? AND next_run = ? AND enabled = 1').run(next, id, seen).changes === 1;
  }

  /** Records a run. A scheduled failure pushes next_run back (backoff) or disables the job at the limit. */
  recordOutcome(id: string, o: Outcome, scheduled: { backoffMs: number; maxFailures: number; oneShot: boolean } | undefined): void {
    const text = o.text.slice(0, MAX_RESULT);
    const status = o.ok ? 'ok' : 'error';
    if (!scheduled) {
      // A manual run (POST …/run) shows as the last run but leaves the schedule and the failure count alone.
      this.sql('UPDATE scheduler_jobs SET last_run = ?, last_status = ?, last_result = ?, last_error = ?, run_count = run_count + 1 WHERE id = ?').run(
        o.at,
        status,
        o.ok ? text : null,
        o.ok ? null : text,
        id,
      );
      return;
    }
    if (o.ok) {
      const done = scheduled.oneShot ? ", enabled = 0, next_run = NULL, disabled_reason = 'one-shot job: it ran'" : '';
      this.sql(
        `UPDATE scheduler_jobs SET last_run = ?, last_status = 'ok', last_result = ?, last_error = NULL, consecutive_failures = 0, run_count = run_count + 1${done} WHERE id = ?`,
      ).run(o.at, text, id);
      return;
    }
    this.db.transaction(() => {
      this.sql(
        "UPDATE scheduler_jobs SET last_run = ?, last_status = 'error', last_error = ?, consecutive_failures = consecutive_failures + 1, run_count = run_count + 1 WHERE id = ?",
      ).run(o.at, text, id);
      const job = this.get(id);
      if (!job) return;
      if (job.consecutive_failures >= scheduled.maxFailures) {
        const reason = `disabled after ${job.consecutive_failures} consecutive failures; the last: ${text.slice(0, 300)}`;
        this.sql('UPDATE scheduler_jobs SET enabled = 0, auto_disabled = 1, next_run = NULL, disabled_reason = ? WHERE id = ?').run(reason, id);
      } else if (job.enabled) {
        // Retry no sooner than the backoff; a one-shot (no next slot) retries at the backoff.
        this.sql('UPDATE scheduler_jobs SET next_run = MAX(COALESCE(next_run, 0), ?) WHERE id = ?').run(o.at + scheduled.backoffMs, id);
      }
    })();
  }

  /** A run that was not made (misfire policy skip): say so in the status. */
  recordSkip(id: string, at: number, why: string): void {
    this.sql("UPDATE scheduler_jobs SET last_status = 'skipped', last_error = ? WHERE id = ?").run(`${why} (${new Date(at).toISOString()})`, id);
  }

  /** Stops one job, saying why. */
  disable(id: string, reason: string): void {
    this.sql('UPDATE scheduler_jobs SET enabled = 0, next_run = NULL, disabled_reason = ?, updated_at = ? WHERE id = ?').run(
      reason,
      new Date().toISOString(),
      id,
    );
  }

  /** Jobs of a killed agent or a deleted workflow stop (disabled with the reason, or deleted). */
  retire(column: 'agent_id' | 'workflow_id', value: string, reason: string, remove: boolean): number {
    if (remove) return this.sql(`DELETE FROM scheduler_jobs WHERE ${column} = ?`).run(value).changes;
    return this.sql(`UPDATE scheduler_jobs SET enabled = 0, next_run = NULL, disabled_reason = ?, updated_at = ? WHERE ${column} = ? AND enabled = 1`).run(
      reason,
      new Date().toISOString(),
      value,
    ).changes;
  }
}
