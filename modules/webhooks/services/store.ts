/** Webhooks and their delivery journal in SQLite. Secrets are stored sealed by the service vault. */
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';

export type HookKind = 'outbound' | 'event';

export interface HookRow {
  id: string;
  kind: HookKind;
  name: string;
  url: string;
  events: string;
  secret: string | null;
  enabled: number;
  disabled_reason: string | null;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

export interface DeliveryRow {
  id: number;
  hook_id: string;
  event_id: string;
  event: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  last_status: number | null;
  created_at: string;
  delivered_at: string | null;
}

export class HookStore {
  private readonly sql;
  /** Enabled webhooks and the events each takes, kept between writes: every bus event asks for them. */
  private subscribers?: Array<{ hook: HookRow; events: string[] }>;

  constructor(private readonly db: Database) {
    this.sql = statements(db);
  }

  list(kind: HookKind): HookRow[] {
    return this.sql<[string], HookRow>('SELECT * FROM webhooks_hooks WHERE kind = ? ORDER BY created_at, id').all(kind);
  }

  all(): HookRow[] {
    return this.sql<[], HookRow>('SELECT * FROM webhooks_hooks').all();
  }

  /** The enabled webhooks with their parsed event lists (read once after each change of the table). */
  enabled(): ReadonlyArray<{ hook: HookRow; events: string[] }> {
    this.subscribers ??= this.sql<[], HookRow>('SELECT * FROM webhooks_hooks WHERE enabled = 1')
      .all()
      .map((hook) => ({ hook, events: JSON.parse(hook.events) as string[] }));
    return this.subscribers;
  }

  get(id: string, kind?: HookKind): HookRow | undefined {
    const row = this.sql<[string], HookRow>('SELECT * FROM webhooks_hooks WHERE id = ?').get(id);
    return row && (!kind || row.kind === kind) ? row : undefined;
  }

  insert(row: HookRow): void {
    this.subscribers = undefined;
    this.sql(
      'INSERT INTO webhooks_hooks (id, kind, name, url, events, secret, enabled, disabled_reason, consecutive_failures, created_at, updated_at) VALUES (@id, @kind, @name, @url, @events, @secret, @enabled, @disabled_reason, @consecutive_failures, @created_at, @updated_at)',
    ).run(row);
  }

  update(row: HookRow): void {
    this.subscribers = undefined;
    this.sql(
      'UPDATE webhooks_hooks SET name = @name, url = @url, events = @events, secret = @secret, enabled = @enabled, disabled_reason = @disabled_reason, consecutive_failures = @consecutive_failures, updated_at = @updated_at WHERE id = @id',
    ).run(row);
  }

  delete(id: string): boolean {
    this.subscribers = undefined;
    return this.db.transaction(() => {
      this.sql('DELETE FROM webhooks_deliveries WHERE hook_id = ?').run(id);
      return this.sql('DELETE FROM webhooks_hooks WHERE id = ?').run(id).changes === 1;
    })();
  }

  enqueue(rows: Array<Pick<DeliveryRow, 'hook_id' | 'event_id' | 'event' | 'body'>>): void {
    const now = Date.now();
    const at = new Date(now).toISOString();
    const insert = this.sql(
      "INSERT INTO webhooks_deliveries (hook_id, event_id, event, body, status, next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
    );
    this.db.transaction(() => {
      for (const r of rows) insert.run(r.hook_id, r.event_id, r.event, r.body, now, at);
    })();
  }

  /** Pending deliveries of enabled webhooks that are due, oldest first. */
  due(now: number, limit: number, skip: ReadonlySet<number>): DeliveryRow[] {
    const rows = this.sql<[number, number], DeliveryRow>(
      `SELECT d.* FROM webhooks_deliveries d JOIN webhooks_hooks h ON h.id = d.hook_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND h.enabled = 1 ORDER BY d.next_attempt_at, d.id LIMIT ?`,
    ).all(now, limit + skip.size);
    return rows.filter((r) => !skip.has(r.id)).slice(0, limit);
  }

  /** At start: what a previous run left pending is due now. */
  resumeAll(): void {
    this.sql("UPDATE webhooks_deliveries SET next_attempt_at = ? WHERE status = 'pending' AND next_attempt_at > ?").run(Date.now(), Date.now());
  }

  /** When the next pending delivery of an enabled webhook is due (ms), if any. */
  nextDue(): number | undefined {
    return (
      this.sql<[], { at: number | null }>(
        "SELECT min(d.next_attempt_at) AS at FROM webhooks_deliveries d JOIN webhooks_hooks h ON h.id = d.hook_id WHERE d.status = 'pending' AND h.enabled = 1",
      ).get()?.at ?? undefined
    );
  }

  delivered(id: number, hookId: string, status: number): void {
    this.db.transaction(() => {
      this.sql(
        "UPDATE webhooks_deliveries SET status = 'delivered', attempts = attempts + 1, last_status = ?, last_error = NULL, delivered_at = ? WHERE id = ?",
      ).run(status, new Date().toISOString(), id);
      this.sql('UPDATE webhooks_hooks SET consecutive_failures = 0 WHERE id = ?').run(hookId);
    })();
  }

  /** Records a failed attempt; returns the webhook's consecutive failures. */
  attemptFailed(id: number, hookId: string, error: string, status: number | null, next: number | undefined): number {
    return this.db.transaction(() => {
      this.sql('UPDATE webhooks_deliveries SET status = ?, attempts = attempts + 1, last_status = ?, last_error = ?, next_attempt_at = ? WHERE id = ?').run(
        next === undefined ? 'failed' : 'pending',
        status,
        error,
        next ?? 0,
        id,
      );
      this.sql('UPDATE webhooks_hooks SET consecutive_failures = consecutive_failures + 1 WHERE id = ?').run(hookId);
      return this.sql<[string], { n: number }>('SELECT consecutive_failures AS n FROM webhooks_hooks WHERE id = ?').get(hookId)?.n ?? 0;
    })();
  }

  /** Deletes the journal rows that ended (delivered or failed) before the cut-off; returns how many. */
  prune(before: Date): number {
    return this.sql("DELETE FROM webhooks_deliveries WHERE status IN ('delivered', 'failed') AND created_at < ?").run(before.toISOString()).changes;
  }

  disable(id: string, reason: string): void {
    this.subscribers = undefined;
    this.sql('UPDATE webhooks_hooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?').run(reason, new Date().toISOString(), id);
  }

  counts(hookId: string): Record<'pending' | 'delivered' | 'failed', number> {
    const out = { pending: 0, delivered: 0, failed: 0 };
    for (const r of this.sql<[string], { status: keyof typeof out; n: number }>(
      'SELECT status, count(*) AS n FROM webhooks_deliveries WHERE hook_id = ? GROUP BY status',
    ).all(hookId)) {
      out[r.status] = r.n;
    }
    return out;
  }

  deliveries(hookId: string, limit: number, offset: number): DeliveryRow[] {
    return this.sql<[string, number, number], DeliveryRow>('SELECT * FROM webhooks_deliveries WHERE hook_id = ? ORDER BY id DESC LIMIT ? OFFSET ?').all(
      hookId,
      limit,
      offset,
    );
  }
}
