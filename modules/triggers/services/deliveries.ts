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

/** A pending fire (triggers_fires) taken over from a gone process. `prompt` is null on rows written before 0003. */
export interface TakenFire {
  id: string;
  trigger_id: string;
  agent_id: string;
  cause: string | null;
  prompt: string | null;
  depth: number;
}

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
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class DeliveryLog implements Deliveries {
  constructor(private readonly deps: DeliveryDeps) {}

  deliver(req: DeliveryRequest): Promise<Delivery> {
    return this.write(req, async () => true) as Promise<Delivery>;
  }

  /**
   * The delivery of a trigger fire's turn, recorded only while the fire is `node`'s: its triggers_fires row goes in
   * the same commit. A process found dead whose fire another one took over (see takeFires) records nothing, and is
   * not offered to the home channel: the one that took it over delivers it. Undefined when not recorded here.
   */
  async deliverFire(req: DeliveryRequest, fire: { id: string; node: string }): Promise<Delivery | undefined> {
    const params = [fire.id, fire.node];
    if (!(await this.deps.store.one('SELECT 1 AS mine FROM triggers_fires WHERE id = ? AND node = ?', params))) return undefined;
    return this.write(req, async (t) => (await t.run('DELETE FROM triggers_fires WHERE id = ? AND node = ?', params)).changes > 0);
  }

  /** Offers the reply to the home channel, then records the delivery if `claim` (in its commit) says so. */
  private async write(req: DeliveryRequest, claim: (t: Queries) => Promise<boolean>): Promise<Delivery | undefined> {
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
    return this.deps.store.tx(async (t) => {
      if (!(await claim(t))) return undefined;
      await this.record(t, delivery);
      return delivery;
    });
  }

  /** A node died: the fires it had not reported are taken over by `node`, to be resumed there. */
  takeFiresOf(dead: string, node: string): Promise<TakenFire[]> {
    return this.takeFires('node = ?', [dead], node);
  }

  /** At start: the same for every node that is not live (they died or stopped while this one did not run). */
  takeFiresAllBut(live: readonly string[], node: string): Promise<TakenFire[]> {
    return live.length ? this.takeFires(`node NOT IN (${marks(live.length)})`, live, node) : this.takeFires('1 = 1', [], node);
  }

  /** One conditional UPDATE … RETURNING moves the rows to `node`, so of several processes only one resumes each. */
  private takeFires(where: string, params: readonly string[], node: string): Promise<TakenFire[]> {
    return this.deps.store.many<TakenFire>(`UPDATE triggers_fires SET node = ? WHERE ${where} RETURNING id, trigger_id, agent_id, cause, prompt, depth`, [
      node,
      ...params,
    ]);
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
