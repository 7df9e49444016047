/**
 * Accepted wakes, persisted before they are acknowledged (openclaw#42157: inbound payloads lost on a restart after the
 * 200). A wake is a row first; it is published on the event bus afterwards and then marked delivered. Rows still
 * undelivered at a start (the process died in between, or delivery was held) are published then, in arrival order:
 * at-least-once, and the same `wakeId` every time so subscribers can drop a repeat.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { conflict, statements, type EventAccess } from '@talon/module-sdk';

export interface WakeInput {
  text: string;
  mode: 'now' | 'next_heartbeat';
  agentId?: string;
}

interface WakeRow {
  id: string;
  idempotency_key: string | null;
  text: string;
  mode: WakeInput['mode'];
  agent_id: string | null;
  received_at: number;
}

/** How many undelivered rows one pass publishes before it yields to the event loop. */
const BATCH = 200;

export class WakeInbox {
  private readonly sql;
  private draining = false;

  constructor(
    private readonly db: Database,
    private readonly events: EventAccess,
    private readonly log: Logger,
    /** [hooks] hold_delivery: while true, wakes are stored and acknowledged but not published. */
    private readonly held: () => boolean,
  ) {
    this.sql = statements(db);
  }

  /**
   * Stores a wake (committed when this returns). With an idempotency key already stored for the same wake, nothing
   * is stored and the first id comes back; the same key with a different wake is a 409.
   */
  accept(wake: WakeInput, key?: string): { id: string; duplicate: boolean } {
    if (key !== undefined) {
      const known = this.sql<[string], WakeRow>('SELECT id, text, mode, agent_id FROM hooks_inbound_wakes WHERE idempotency_key = ?').get(key);
      if (known) {
        if (known.text !== wake.text || known.mode !== wake.mode || known.agent_id !== (wake.agentId ?? null)) {
          throw conflict('Idempotency-Key was already used for a different wake (text, mode or agent differ)');
        }
        return { id: known.id, duplicate: true };
      }
    }
    const id = randomUUID();
    this.sql('INSERT INTO hooks_inbound_wakes (id, idempotency_key, text, mode, agent_id, received_at) VALUES (?,?,?,?,?,?)').run(
      id,
      key ?? null,
      wake.text,
      wake.mode,
      wake.agentId ?? null,
      Date.now(),
    );
    return { id, duplicate: false };
  }

  pendingCount(): number {
    return this.sql<[], { n: number }>('SELECT count(*) AS n FROM hooks_inbound_wakes WHERE delivered_at IS NULL').get()!.n;
  }

  /**
   * Publishes every undelivered wake in arrival order and marks them delivered one event-loop turn later, after the
   * bus has handed them to its idle subscribers (which start on the next turn; the webhooks module journals there).
   * A pass already running picks up rows stored meanwhile.
   */
  async deliverPending(): Promise<void> {
    if (this.draining || this.held()) return;
    this.draining = true;
    try {
      while (!this.held()) {
        const rows = this.sql<[number], WakeRow>(
          'SELECT id, text, mode, agent_id, received_at FROM hooks_inbound_wakes WHERE delivered_at IS NULL ORDER BY seq LIMIT ?',
        ).all(BATCH);
        if (!rows.length) return;
        for (const row of rows) this.publish(row);
        await new Promise((resolve) => setImmediate(resolve));
        this.markDelivered(rows.map((r) => r.id));
      }
    } catch (err) {
      this.log.warn({ err }, 'wake delivery stopped; undelivered wakes go out at the next delivery or start');
    } finally {
      this.draining = false;
    }
  }

  /** Delivered rows older than the retention go (their idempotency keys with them); undelivered rows always stay. */
  prune(retentionDays: number): number {
    const before = Date.now() - retentionDays * 86_400_000;
    return this.sql('DELETE FROM hooks_inbound_wakes WHERE delivered_at IS NOT NULL AND delivered_at < ?').run(before).changes;
  }

  private publish(row: WakeRow): void {
    this.events.publish('custom', {
      type: 'webhook.wake',
      data: {
        source: 'webhook',
        text: row.text,
        mode: row.mode,
        agentId: row.agent_id ?? undefined,
        wakeId: row.id,
        receivedAt: new Date(row.received_at).toISOString(),
      },
    });
  }

  private markDelivered(ids: string[]): void {
    const mark = this.sql('UPDATE hooks_inbound_wakes SET delivered_at = ? WHERE id = ?');
    const now = Date.now();
    this.db.transaction(() => {
      for (const id of ids) mark.run(now, id);
    })();
  }
}
