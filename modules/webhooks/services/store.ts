/** Webhooks and their delivery journal in the service store. Secrets are stored sealed by the service vault. */
import type { Queries, SqlValue, Store } from '@talon/module-sdk';

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

/**
 * pending: waits for its time (a `node` there is the one whose backoff it waits for, not a claim); sending: claimed by
 * `node` until `lease_until`; delivered and failed: ended.
 */
export type DeliveryStatus = 'pending' | 'sending' | 'delivered' | 'failed';

export interface DeliveryRow {
  id: number;
  hook_id: string;
  event_id: string;
  event: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  last_status: number | null;
  created_at: string;
  delivered_at: string | null;
  node: string | null;
  lease_until: number | null;
}

export interface Subscriber {
  hook: HookRow;
  events: string[];
}

/** The change-feed topic of the webhooks table: the other processes drop their subscriber lists. */
export const HOOKS_TOPIC = 'hooks';

const HOOK_COLUMNS = 'id, kind, name, url, events, secret, enabled, disabled_reason, consecutive_failures, created_at, updated_at';

const hookValues = (row: HookRow): SqlValue[] => [
  row.id,
  row.kind,
  row.name,
  row.url,
  row.events,
  row.secret,
  row.enabled,
  row.disabled_reason,
  row.consecutive_failures,
  row.created_at,
  row.updated_at,
];

/** `?, ?, …` for an IN list. */
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class HookStore {
  /** Enabled webhooks and the events each takes, kept between writes: every bus event asks for them. */
  private subscribers?: Promise<Subscriber[]>;

  constructor(
    private readonly store: Store,
    /** Notes a change of the webhooks table for the other processes (inside the writing transaction). */
    private readonly noteChange: (t: Queries) => Promise<void>,
  ) {}

  list(kind: HookKind): Promise<HookRow[]> {
    return this.store.many<HookRow>(`SELECT ${HOOK_COLUMNS} FROM webhooks_hooks WHERE kind = ? ORDER BY created_at, id`, [kind]);
  }

  /** The enabled webhooks with their parsed event lists (read once after each change of the table, here or elsewhere). */
  enabled(): Promise<Subscriber[]> {
    this.subscribers ??= this.store
      .many<HookRow>(`SELECT ${HOOK_COLUMNS} FROM webhooks_hooks WHERE enabled = 1`)
      .then((rows) => rows.map((hook) => ({ hook, events: JSON.parse(hook.events) as string[] })));
    const loading = this.subscribers;
    // A failed read is not kept: the next event reads again.
    loading.catch(() => {
      if (this.subscribers === loading) this.subscribers = undefined;
    });
    return loading;
  }

  /** Forgets the subscriber list (a change here, or one another process noted). */
  invalidate(): void {
    this.subscribers = undefined;
  }

  async get(id: string, kind?: HookKind): Promise<HookRow | undefined> {
    const row = await this.store.one<HookRow>(`SELECT ${HOOK_COLUMNS} FROM webhooks_hooks WHERE id = ?`, [id]);
    return row && (!kind || row.kind === kind) ? row : undefined;
  }

  async insert(row: HookRow): Promise<void> {
    await this.changeHooks((t) => t.run(`INSERT INTO webhooks_hooks (${HOOK_COLUMNS}) VALUES (${marks(11)})`, hookValues(row)));
  }

  async update(row: HookRow): Promise<void> {
    await this.changeHooks((t) =>
      t.run(
        'UPDATE webhooks_hooks SET name = ?, url = ?, events = ?, secret = ?, enabled = ?, disabled_reason = ?, consecutive_failures = ?, updated_at = ? WHERE id = ?',
        [row.name, row.url, row.events, row.secret, row.enabled, row.disabled_reason, row.consecutive_failures, row.updated_at, row.id],
      ),
    );
  }

  delete(id: string): Promise<boolean> {
    return this.changeHooks(async (t) => {
      await t.run('DELETE FROM webhooks_deliveries WHERE hook_id = ?', [id]);
      return (await t.run('DELETE FROM webhooks_hooks WHERE id = ?', [id])).changes === 1;
    });
  }

  async disable(id: string, reason: string): Promise<void> {
    await this.changeHooks((t) =>
      t.run('UPDATE webhooks_hooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?', [reason, new Date().toISOString(), id]),
    );
  }

  async enqueue(rows: Array<Pick<DeliveryRow, 'hook_id' | 'event_id' | 'event' | 'body'>>): Promise<void> {
    const now = Date.now();
    const at = new Date(now).toISOString();
    await this.store.tx(async (t) => {
      for (const r of rows)
        await t.run(
          "INSERT INTO webhooks_deliveries (hook_id, event_id, event, body, status, next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
          [r.hook_id, r.event_id, r.event, r.body, now, at],
        );
    });
  }

  /**
   * Claims up to `limit` due deliveries of enabled webhooks for `node`, oldest first: each row moves pending → sending
   * by a conditional update, so of several processes claiming at once exactly one gets it.
   */
  claim(node: string, now: number, limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    return this.store.tx(async (t) => {
      const due = await t.many<DeliveryRow>(
        `SELECT d.* FROM webhooks_deliveries d JOIN webhooks_hooks h ON h.id = d.hook_id
         WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND h.enabled = 1 ORDER BY d.next_attempt_at, d.id LIMIT ?`,
        [now, limit],
      );
      const claimed: DeliveryRow[] = [];
      for (const row of due) {
        const { changes } = await t.run("UPDATE webhooks_deliveries SET status = 'sending', node = ?, lease_until = ? WHERE id = ? AND status = 'pending'", [
          node,
          now + leaseMs,
          row.id,
        ]);
        if (changes === 1) claimed.push({ ...row, status: 'sending', node, lease_until: now + leaseMs });
      }
      return claimed;
    });
  }

  /** Gives a node's claims back (pending, due now): the node died, or its attempt was cut short. Returns how many. */
  async release(node: string, ids?: readonly number[]): Promise<number> {
    const only = ids ? ` AND id IN (${marks(ids.length)})` : '';
    if (ids && !ids.length) return 0;
    const { changes } = await this.store.run(
      `UPDATE webhooks_deliveries SET status = 'pending', node = NULL, lease_until = NULL, next_attempt_at = ? WHERE node = ? AND status = 'sending'${only}`,
      [Date.now(), node, ...(ids ?? [])],
    );
    return changes;
  }

  /** At start: claims of nodes that are not live go back to pending. Returns how many. */
  async releaseAllBut(live: readonly string[]): Promise<number> {
    const { changes } = await this.store.run(
      `UPDATE webhooks_deliveries SET status = 'pending', node = NULL, lease_until = NULL, next_attempt_at = ?
       WHERE status = 'sending'${live.length ? ` AND node NOT IN (${marks(live.length)})` : ''}`,
      [Date.now(), ...live],
    );
    return changes;
  }

  /**
   * At start: what a previous run left waiting for a backoff is due now. A backoff set by a node that is still live
   * (its `node` stays on the pending row) is its own: another process starting does not undo it.
   */
  async resumeAll(live: readonly string[]): Promise<void> {
    const now = Date.now();
    const ownedByLive = live.length ? ` AND (node IS NULL OR node NOT IN (${marks(live.length)}))` : '';
    await this.store.run(`UPDATE webhooks_deliveries SET next_attempt_at = ? WHERE status = 'pending' AND next_attempt_at > ?${ownedByLive}`, [
      now,
      now,
      ...live,
    ]);
  }

  /** When the next pending delivery of an enabled webhook is due (ms), if any. */
  async nextDue(): Promise<number | undefined> {
    const row = await this.store.one<{ at: number | null }>(
      "SELECT MIN(d.next_attempt_at) AS at FROM webhooks_deliveries d JOIN webhooks_hooks h ON h.id = d.hook_id WHERE d.status = 'pending' AND h.enabled = 1",
    );
    return row?.at ?? undefined;
  }

  /** Records a successful attempt of a delivery this node claimed. */
  async delivered(id: number, node: string, hookId: string, status: number): Promise<void> {
    await this.store.tx(async (t) => {
      await t.run(
        "UPDATE webhooks_deliveries SET status = 'delivered', attempts = attempts + 1, last_status = ?, last_error = NULL, delivered_at = ?, node = NULL, lease_until = NULL WHERE id = ? AND node = ?",
        [status, new Date().toISOString(), id, node],
      );
      await t.run('UPDATE webhooks_hooks SET consecutive_failures = 0 WHERE id = ?', [hookId]);
    });
  }

  /**
   * Records a failed attempt of a delivery this node claimed; returns the webhook's consecutive failures. A retry
   * keeps `node` (without a lease: it is no claim) to say whose backoff it waits for; see resumeAll.
   */
  attemptFailed(id: number, node: string, hookId: string, error: string, status: number | null, next: number | undefined): Promise<number> {
    return this.store.tx(async (t) => {
      await t.run(
        'UPDATE webhooks_deliveries SET status = ?, attempts = attempts + 1, last_status = ?, last_error = ?, next_attempt_at = ?, node = ?, lease_until = NULL WHERE id = ? AND node = ?',
        [next === undefined ? 'failed' : 'pending', status, error, next ?? 0, next === undefined ? null : node, id, node],
      );
      const row = await t.one<{ n: number }>(
        'UPDATE webhooks_hooks SET consecutive_failures = consecutive_failures + 1 WHERE id = ? RETURNING consecutive_failures AS n',
        [hookId],
      );
      return row?.n ?? 0;
    });
  }

  /** Deletes the journal rows that ended (delivered or failed) before the cut-off; returns how many. */
  async prune(before: Date): Promise<number> {
    const { changes } = await this.store.run("DELETE FROM webhooks_deliveries WHERE status IN ('delivered', 'failed') AND created_at < ?", [
      before.toISOString(),
    ]);
    return changes;
  }

  /** Deliveries per state; a claimed one (sending) counts as pending. */
  async counts(hookId: string): Promise<Record<'pending' | 'delivered' | 'failed', number>> {
    const out = { pending: 0, delivered: 0, failed: 0 };
    const rows = await this.store.many<{ status: DeliveryStatus; n: number }>(
      'SELECT status, COUNT(*) AS n FROM webhooks_deliveries WHERE hook_id = ? GROUP BY status',
      [hookId],
    );
    for (const r of rows) out[r.status === 'sending' ? 'pending' : r.status] += r.n;
    return out;
  }

  deliveries(hookId: string, limit: number, offset: number): Promise<DeliveryRow[]> {
    return this.store.many<DeliveryRow>('SELECT * FROM webhooks_deliveries WHERE hook_id = ? ORDER BY id DESC LIMIT ? OFFSET ?', [hookId, limit, offset]);
  }

  /** A write of the webhooks table: the subscriber list is read again, here and in the other processes. */
  private async changeHooks<T>(write: (t: Queries) => Promise<T>): Promise<T> {
    try {
      return await this.store.tx(async (t) => {
        const result = await write(t);
        await this.noteChange(t);
        return result;
      });
    } finally {
      this.invalidate();
    }
  }
}
