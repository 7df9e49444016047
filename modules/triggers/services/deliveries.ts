/**
 * Deliveries: the reply of a background turn (trigger, schedule, task wake-up) is offered to the homeChannel hook —
 * a channel module sends it to the agent's home channel — and otherwise stays in the session the turn ran in. Either
 * way, and for failures too, a row says what happened: nothing is dropped silently.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Queries, Store } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { Deliveries, Delivery, DeliveryRequest, HomeDelivery } from '@talon/triggers';

export interface DeliveryDeps {
  store: Store;
  log: Logger;
  agents: () => AgentRegistry | undefined;
  homeChannel: (delivery: HomeDelivery) => Promise<string | undefined>;
  kept: () => number;
}

const MAX_TEXT = 32_000;
const COLUMN_LIST = ['id', 'agent_id', 'source', 'source_id', 'session_id', 'status', 'channel', 'response', 'error', 'cause', 'created_at'] as const;
const COLUMNS = COLUMN_LIST.join(', ');
const LOST =
  "lost: the process that fired this trigger ended before the turn's outcome was recorded (the turn may not have run; if it ran, its reply is in the agent's session)";
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class DeliveryLog implements Deliveries {
  constructor(private readonly deps: DeliveryDeps) {}

  /** `fireId`: the trigger fire whose turn this reports (its triggers_fires row goes in the same commit). */
  async deliver(req: DeliveryRequest, fireId?: string): Promise<Delivery> {
    let channel: string | undefined;
    if (req.error === undefined && req.response !== undefined) {
      const agent = this.deps.agents()?.get(req.agentId);
      try {
        channel = await this.deps.homeChannel({
          agentId: req.agentId,
          agentName: agent?.name ?? req.agentId,
          sessionId: req.sessionId,
          text: req.response,
          source: req.source,
          sourceId: req.sourceId,
        });
      } catch (err) {
        this.deps.log.warn({ err, agentId: req.agentId }, 'home channel delivery failed; the reply stays in the session');
      }
    }
    const delivery: Delivery = {
      id: randomUUID(),
      agent_id: req.agentId,
      source: req.source,
      source_id: req.sourceId,
      session_id: req.sessionId ?? null,
      status: req.error !== undefined ? 'failed' : channel ? 'delivered' : 'kept',
      channel: channel ?? null,
      response: req.response?.slice(0, MAX_TEXT) ?? null,
      error: req.error?.slice(0, MAX_TEXT) ?? null,
      cause: req.cause ?? null,
      created_at: new Date().toISOString(),
    };
    await this.deps.store.tx(async (t) => {
      await this.record(t, delivery);
      if (fireId) await t.run('DELETE FROM triggers_fires WHERE id = ?', [fireId]);
    });
    return delivery;
  }

  /** A node died: the fires it had not reported become failed deliveries saying so. Returns how many. */
  loseFiresOf(node: string): Promise<number> {
    return this.loseFires('node = ?', [node]);
  }

  /** At start: the same for every node that is not live (they died or stopped while this one did not run). */
  loseFiresAllBut(live: readonly string[]): Promise<number> {
    return live.length ? this.loseFires(`node NOT IN (${marks(live.length)})`, live) : this.loseFires('1 = 1', []);
  }

  /** One conditional DELETE … RETURNING takes the rows, so of several processes only one records each as lost. */
  private loseFires(where: string, params: readonly string[]): Promise<number> {
    return this.deps.store.tx(async (t) => {
      const fires = await t.many<{ trigger_id: string; agent_id: string; cause: string | null }>(
        `DELETE FROM triggers_fires WHERE ${where} RETURNING trigger_id, agent_id, cause`,
        [...params],
      );
      const now = new Date().toISOString();
      for (const f of fires) {
        await this.record(t, {
          id: randomUUID(),
          agent_id: f.agent_id,
          source: 'trigger',
          source_id: f.trigger_id,
          session_id: null,
          status: 'failed',
          channel: null,
          response: null,
          error: LOST,
          cause: f.cause,
          created_at: now,
        });
      }
      return fires.length;
    });
  }

  /** The row and the pruning of the agent's oldest, in the caller's commit. */
  private async record(t: Queries, delivery: Delivery): Promise<void> {
    await t.run(`INSERT INTO triggers_deliveries (${COLUMNS}) VALUES (${marks(COLUMN_LIST.length)})`, [...COLUMN_LIST.map((c) => delivery[c])]);
    await t.run(
      `DELETE FROM triggers_deliveries WHERE agent_id = ? AND seq <= (SELECT seq FROM triggers_deliveries WHERE agent_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      [delivery.agent_id, delivery.agent_id, this.deps.kept()],
    );
  }

  /** An agent's deliveries, newest first. */
  async list(
    agentId: string,
    limit: number,
    offset: number,
  ): Promise<{ agent_id: string; deliveries: Delivery[]; total: number; offset: number; limit: number }> {
    const total = Number((await this.deps.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM triggers_deliveries WHERE agent_id = ?', [agentId]))!.n);
    const deliveries = await this.deps.store.many<Delivery>(
      `SELECT ${COLUMNS} FROM triggers_deliveries WHERE agent_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`,
      [agentId, limit, offset],
    );
    return { agent_id: agentId, deliveries, total, offset, limit };
  }
}
