/**
 * Accepted wakes, persisted before they are acknowledged (openclaw#42157: inbound payloads lost on a restart after the
 * 200). A wake is a row first; it is published on the event bus afterwards and then marked delivered. Rows still
 * undelivered at a start (the process died in between, or delivery was held) are published then, in arrival order:
 * at-least-once, and the same `wakeId` every time so subscribers can drop a repeat. Several processes on one home
 * share the rows: a pass claims the rows it publishes (node, lease) with one conditional update, so each wake is
 * published by one process; a dead node's claims are released and published by another.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { conflict, type EventAccess, type NodeAccess, type Store } from '@talon/module-sdk';

export interface WakeInput {
  text: string;
  mode: 'now' | 'next_heartbeat';
  agentId?: string;
}

interface WakeRow {
  seq: number;
  id: string;
  idempotency_key: string | null;
  text: string;
  mode: WakeInput['mode'];
  agent_id: string | null;
  received_at: number;
}

/** How many undelivered rows one pass publishes before it yields to the event loop. */
const BATCH = 200;

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class WakeInbox {
  private draining = false;

  constructor(
    private readonly store: Store,
    private readonly events: EventAccess,
    private readonly log: Logger,
    /** [hooks] hold_delivery: while true, wakes are stored and acknowledged but not published. */
    private readonly held: () => boolean,
    /** This process's node id and how long a claim lasts. */
    private readonly node: Pick<NodeAccess, 'id' | 'leaseMs' | 'active'>,
  ) {}

  /**
   * Stores a wake (committed when this resolves). With an idempotency key already stored for the same wake, nothing
   * is stored and the first id comes back; the same key with a different wake is a 409. The insert comes first and
   * yields to a stored key: of two processes given the same key at once, one stores it and the other sees it.
   */
  async accept(wake: WakeInput, key?: string): Promise<{ id: string; duplicate: boolean }> {
    const id = randomUUID();
    const stored = await this.store.one(
      'INSERT INTO hooks_inbound_wakes (id, idempotency_key, text, mode, agent_id, received_at) VALUES (?,?,?,?,?,?) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id',
      [id, key ?? null, wake.text, wake.mode, wake.agentId ?? null, Date.now()],
    );
    if (stored) return { id, duplicate: false };
    const known = await this.store.one<WakeRow>('SELECT id, text, mode, agent_id FROM hooks_inbound_wakes WHERE idempotency_key = ?', [key ?? null]);
    // Pruned in between (its retention ended): the key is free again.
    if (!known) return this.accept(wake, key);
    if (known.text !== wake.text || known.mode !== wake.mode || known.agent_id !== (wake.agentId ?? null)) {
      throw conflict('Idempotency-Key was already used for a different wake (text, mode or agent differ)');
    }
    return { id: known.id, duplicate: true };
  }

  async pendingCount(): Promise<number> {
    return (await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM hooks_inbound_wakes WHERE delivered_at IS NULL'))!.n;
  }

  /**
   * Publishes every undelivered wake no process has claimed, in arrival order, and marks them delivered one
   * event-loop turn later, after the bus has handed them to its idle subscribers (which start on the next turn; the
   * webhooks module journals there). A pass already running picks up rows stored meanwhile.
   */
  async deliverPending(): Promise<void> {
    if (this.draining || this.held()) return;
    this.draining = true;
    let rows: WakeRow[] = [];
    try {
      while (!this.held()) {
        rows = await this.claim();
        if (!rows.length) return;
        for (const row of rows) this.publish(row);
        await new Promise((resolve) => setImmediate(resolve));
        await this.markDelivered(rows.map((r) => r.id));
        rows = [];
      }
    } catch (err) {
      this.log.warn({ err }, 'wake delivery stopped; undelivered wakes go out at the next delivery or start');
      // Claimed and not marked: handed back, so that the next pass (here or in another process) publishes them.
      await this.release(
        this.node.id,
        rows.map((r) => r.id),
      ).catch(() => undefined);
    } finally {
      this.draining = false;
    }
  }

  /** Gives a node's claims of undelivered wakes back (the node died; or only `ids`, a pass that failed). Returns how many. */
  async release(node: string, ids?: readonly string[]): Promise<number> {
    if (ids && !ids.length) return 0;
    const only = ids ? ` AND id IN (${marks(ids.length)})` : '';
    const { changes } = await this.store.run(`UPDATE hooks_inbound_wakes SET node = NULL, lease_until = NULL WHERE node = ? AND delivered_at IS NULL${only}`, [
      node,
      ...(ids ?? []),
    ]);
    return changes;
  }

  /** At start: claims of nodes that are not live are released. */
  async releaseAllBut(live: readonly string[]): Promise<number> {
    const { changes } = await this.store.run(
      `UPDATE hooks_inbound_wakes SET node = NULL, lease_until = NULL WHERE node IS NOT NULL AND delivered_at IS NULL${live.length ? ` AND node NOT IN (${marks(live.length)})` : ''}`,
      [...live],
    );
    return changes;
  }

  /** Delivered rows older than the retention go (their idempotency keys with them); undelivered rows always stay. */
  async prune(retentionDays: number): Promise<number> {
    const before = Date.now() - retentionDays * 86_400_000;
    return (await this.store.run('DELETE FROM hooks_inbound_wakes WHERE delivered_at IS NOT NULL AND delivered_at < ?', [before])).changes;
  }

  /**
   * Claims the oldest unclaimed undelivered rows for this node: one statement, and the outer conditions are checked
   * again on each row it changes, so a row another process claimed meanwhile is not taken.
   */
  private async claim(): Promise<WakeRow[]> {
    // A node that no longer beats is gone to the others, who take its claims over: it takes none again.
    if (!this.node.active) return [];
    const rows = await this.store.many<WakeRow>(
      `UPDATE hooks_inbound_wakes SET node = ?, lease_until = ?
       WHERE delivered_at IS NULL AND node IS NULL
         AND id IN (SELECT id FROM hooks_inbound_wakes WHERE delivered_at IS NULL AND node IS NULL ORDER BY seq LIMIT ?)
       RETURNING seq, id, text, mode, agent_id, received_at`,
      [this.node.id, Date.now() + this.node.leaseMs, BATCH],
    );
    return rows.sort((a, b) => a.seq - b.seq);
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

  private async markDelivered(ids: string[]): Promise<void> {
    await this.store.run(`UPDATE hooks_inbound_wakes SET delivered_at = ? WHERE id IN (${marks(ids.length)})`, [Date.now(), ...ids]);
  }
}
