/**
 * The journal's rows. Inbound: committed before the platform is acknowledged, one per (channel, platform id), adopted
 * into the session in the transaction that writes the user message. Outbound: one row per chunk, claimed `sending`
 * for exactly one platform call.
 */
import { randomUUID } from 'node:crypto';
import type { Queries, Store } from '@talon/module-sdk';
import type { InboundMessage, OutboundChunk } from '@talon/channels';

export type InboundState = 'received' | 'adopted' | 'answered' | 'refused' | 'failed';
export type OutboundState = 'queued' | 'sending' | 'sent' | 'failed' | 'unknown' | 'expired';

export interface InboundRow {
  id: string;
  channel: string;
  platform_id: string;
  chat_id: string;
  thread_id: string;
  sender_id: string;
  payload: string;
  state: InboundState;
  reason: string | null;
  agent_id: string | null;
  session_id: string | null;
  node: string | null;
  attempts: number;
  received_at: number;
}

export interface OutboundRow {
  id: string;
  channel: string;
  chat_id: string;
  reply_id: string;
  seq: number;
  inbound_id: string | null;
  payload: string;
  state: OutboundState;
  message_id: string | null;
  error: string | null;
  node: string | null;
  attempts: number;
  created_at: number;
  not_after: number;
  updated_at: number;
}

export class Journal {
  constructor(
    readonly store: Store,
    private readonly node: string,
  ) {}

  /** Commits the message (claimed by this process); undefined when the platform delivered this id before. */
  async receive(channel: string, m: InboundMessage): Promise<string | undefined> {
    const id = randomUUID();
    const now = Date.now();
    const { changes } = await this.store.run(
      `INSERT INTO channels_inbound (id, channel, platform_id, chat_id, thread_id, sender_id, payload, state, node, received_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'received', ?, ?, ?) ON CONFLICT (channel, platform_id) DO NOTHING`,
      [id, channel, m.platformId, m.chatId, m.threadId ?? '', m.senderId, JSON.stringify(m), this.node, now, now],
    );
    return changes ? id : undefined;
  }

  inbound(id: string): Promise<InboundRow | undefined> {
    return this.store.one<InboundRow>('SELECT * FROM channels_inbound WHERE id = ?', [id]);
  }

  /** Ends a row that never reaches an agent (refused by policy, answered by a command, failed). */
  async settle(id: string, state: 'refused' | 'answered' | 'failed', reason: string | null, q: Queries = this.store): Promise<void> {
    await q.run('UPDATE channels_inbound SET state = ?, reason = ?, node = NULL, updated_at = ? WHERE id = ?', [state, reason, Date.now(), id]);
  }

  /**
   * Inside the adoption transaction: the row goes received → adopted only if this process still holds it, so a
   * second process (or a second attempt) never adopts it again. Returns false when it was not ours to adopt.
   */
  async markAdopted(t: Queries, id: string, agentId: string, sessionId: string): Promise<boolean> {
    const { changes } = await t.run(
      `UPDATE channels_inbound SET state = 'adopted', agent_id = ?, session_id = ?, attempts = attempts + 1, updated_at = ?
       WHERE id = ? AND state = 'received' AND node = ?`,
      [agentId, sessionId, Date.now(), id, this.node],
    );
    return changes > 0;
  }

  /** The sender's other messages in this conversation still waiting in this process, oldest first: a burst to join. */
  burst(row: Pick<InboundRow, 'id' | 'channel' | 'chat_id' | 'thread_id' | 'sender_id'>): Promise<InboundRow[]> {
    return this.store.many<InboundRow>(
      `SELECT * FROM channels_inbound WHERE channel = ? AND chat_id = ? AND thread_id = ? AND sender_id = ? AND state = 'received' AND node = ? AND id <> ?
       ORDER BY received_at`,
      [row.channel, row.chat_id, row.thread_id, row.sender_id, this.node, row.id],
    );
  }

  /** Inside the adoption transaction: a message joined into another's turn ends here, answered by that turn. */
  async markJoined(t: Queries, id: string, into: string): Promise<boolean> {
    const { changes } = await t.run(
      "UPDATE channels_inbound SET state = 'answered', reason = ?, node = NULL, updated_at = ? WHERE id = ? AND state = 'received' AND node = ?",
      [`joined into the turn of ${into}`, Date.now(), id, this.node],
    );
    return changes > 0;
  }

  /** The session of (channel, chat, thread) for the agent, made in `t` when there is none yet. */
  async sessionFor(t: Queries, key: { channel: string; chatId: string; threadId: string; agentId: string }, create: () => Promise<string>): Promise<string> {
    const row = await t.one<{ session_id: string }>(
      'SELECT session_id FROM channels_sessions WHERE channel = ? AND chat_id = ? AND thread_id = ? AND agent_id = ?',
      [key.channel, key.chatId, key.threadId, key.agentId],
    );
    if (row) return row.session_id;
    const sessionId = await create();
    await t.run('INSERT INTO channels_sessions (channel, chat_id, thread_id, agent_id, session_id) VALUES (?, ?, ?, ?, ?)', [
      key.channel,
      key.chatId,
      key.threadId,
      key.agentId,
      sessionId,
    ]);
    return sessionId;
  }

  /** Rows of this process's (or no process's) to work on: received or adopted without an answer. */
  open(): Promise<InboundRow[]> {
    return this.store.many<InboundRow>(
      "SELECT * FROM channels_inbound WHERE state IN ('received', 'adopted') AND (node IS NULL OR node = ?) ORDER BY received_at",
      [this.node],
    );
  }

  /** Takes a row left by no process (its own died) for this one. */
  async claim(id: string): Promise<boolean> {
    const { changes } = await this.store.run(
      "UPDATE channels_inbound SET node = ?, updated_at = ? WHERE id = ? AND state IN ('received', 'adopted') AND node IS NULL",
      [this.node, Date.now(), id],
    );
    return changes > 0;
  }

  /** A dead process's leases: its open inbound rows go back to no one; its chunks in flight become unknown. */
  async release(node: string, dedupChannels: readonly string[]): Promise<void> {
    const now = Date.now();
    await this.store.tx(async (t) => {
      await t.run("UPDATE channels_inbound SET node = NULL, updated_at = ? WHERE node = ? AND state IN ('received', 'adopted')", [now, node]);
      // A platform that drops a repeated nonce gets the chunk again; elsewhere the operator decides (replay or prune).
      for (const channel of dedupChannels) {
        await t.run("UPDATE channels_outbound SET state = 'queued', node = NULL, updated_at = ? WHERE node = ? AND state = 'sending' AND channel = ?", [
          now,
          node,
          channel,
        ]);
      }
      await t.run(
        "UPDATE channels_outbound SET state = 'unknown', error = 'the process sending it stopped before the platform answered', node = NULL, updated_at = ? WHERE node = ? AND state = 'sending'",
        [now, node],
      );
      await t.run("UPDATE channels_outbound SET node = NULL, updated_at = ? WHERE node = ? AND state = 'queued'", [now, node]);
    });
  }

  /**
   * The chunks of a reply, queued, and the inbound row answered, in one transaction. `handOver`: queued for no process
   * (node NULL), for the process running the channel to take (this one is on standby).
   */
  async queueReply(
    t: Queries,
    reply: { channel: string; chatId: string; inboundId?: string; chunks: OutboundChunk[]; notAfter: number; handOver?: boolean },
  ): Promise<string> {
    const replyId = randomUUID();
    const now = Date.now();
    for (const [seq, chunk] of reply.chunks.entries()) {
      const id = chunk.nonce;
      await t.run(
        `INSERT INTO channels_outbound (id, channel, chat_id, reply_id, seq, inbound_id, payload, state, node, created_at, not_after, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
        [
          id,
          reply.channel,
          reply.chatId,
          replyId,
          seq,
          reply.inboundId ?? null,
          JSON.stringify(chunk),
          reply.handOver ? null : this.node,
          now,
          reply.notAfter,
          now,
        ],
      );
    }
    if (reply.inboundId) await this.settle(reply.inboundId, 'answered', null, t);
    return replyId;
  }

  chunks(replyId: string): Promise<OutboundRow[]> {
    return this.store.many<OutboundRow>('SELECT * FROM channels_outbound WHERE reply_id = ? ORDER BY seq', [replyId]);
  }

  /** Claims a queued chunk for one platform call; expired ones are marked so instead. */
  async claimChunk(id: string): Promise<'sending' | 'expired' | 'taken'> {
    const now = Date.now();
    const expired = await this.store.run(
      "UPDATE channels_outbound SET state = 'expired', error = 'not sent before not_after', node = NULL, updated_at = ? WHERE id = ? AND state = 'queued' AND not_after < ?",
      [now, id, now],
    );
    if (expired.changes) return 'expired';
    const { changes } = await this.store.run(
      "UPDATE channels_outbound SET state = 'sending', node = ?, attempts = attempts + 1, updated_at = ? WHERE id = ? AND state = 'queued'",
      [this.node, now, id],
    );
    return changes ? 'sending' : 'taken';
  }

  async sent(id: string, messageId: string): Promise<void> {
    await this.store.run("UPDATE channels_outbound SET state = 'sent', message_id = ?, error = NULL, node = NULL, updated_at = ? WHERE id = ?", [
      messageId,
      Date.now(),
      id,
    ]);
  }

  /** Back to queued (a 429 or a transient error: tried again); `failed` keeps the payload for the operator. */
  async unsent(id: string, state: 'queued' | 'failed', error: string): Promise<void> {
    await this.store.run('UPDATE channels_outbound SET state = ?, error = ?, node = ?, updated_at = ? WHERE id = ?', [
      state,
      error,
      state === 'queued' ? this.node : null,
      Date.now(),
      id,
    ]);
  }

  /** Queued chunks nobody holds (their process died, or a process on standby handed them over), by reply. */
  orphanReplies(): Promise<Array<{ reply_id: string; channel: string }>> {
    return this.store.many<{ reply_id: string; channel: string }>(
      "SELECT DISTINCT reply_id, channel FROM channels_outbound WHERE state = 'queued' AND node IS NULL ORDER BY reply_id",
    );
  }

  async adoptOrphanChunks(replyId: string): Promise<boolean> {
    const { changes } = await this.store.run("UPDATE channels_outbound SET node = ? WHERE reply_id = ? AND state = 'queued' AND node IS NULL", [
      this.node,
      replyId,
    ]);
    return changes > 0;
  }

  /** Failed, unknown or expired rows, for the operator. */
  problems(channel: string | undefined, limit: number): Promise<OutboundRow[]> {
    return this.store.many<OutboundRow>(
      `SELECT * FROM channels_outbound WHERE state IN ('failed', 'unknown', 'expired') ${channel ? 'AND channel = ?' : ''} ORDER BY created_at DESC LIMIT ?`,
      channel ? [channel, limit] : [limit],
    );
  }

  /** Puts a failed, unknown or expired row back in the queue (a fresh not_after); false when it is not such a row. */
  async requeue(id: string, notAfter: number): Promise<OutboundRow | undefined> {
    const { changes } = await this.store.run(
      "UPDATE channels_outbound SET state = 'queued', node = ?, not_after = ?, updated_at = ? WHERE id = ? AND state IN ('failed', 'unknown', 'expired')",
      [this.node, notAfter, Date.now(), id],
    );
    return changes ? this.store.one<OutboundRow>('SELECT * FROM channels_outbound WHERE id = ?', [id]) : undefined;
  }

  /** Deletes failed, unknown or expired rows (of one channel, or one row); returns how many. */
  async prune(filter: { channel?: string; id?: string }): Promise<number> {
    const where = ["state IN ('failed', 'unknown', 'expired')"];
    const params: string[] = [];
    if (filter.channel) (where.push('channel = ?'), params.push(filter.channel));
    if (filter.id) (where.push('id = ?'), params.push(filter.id));
    return (await this.store.run(`DELETE FROM channels_outbound WHERE ${where.join(' AND ')}`, params)).changes;
  }

  /** Counts for GET /api/channels/{name}. */
  async backlog(channel: string): Promise<{ inbound: number; outbound: number; failed: number; unknown: number }> {
    const i = await this.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM channels_inbound WHERE channel = ? AND state IN ('received', 'adopted')", [
      channel,
    ]);
    const o = await this.store.many<{ state: string; n: number }>(
      "SELECT state, COUNT(*) AS n FROM channels_outbound WHERE channel = ? AND state IN ('queued', 'sending', 'failed', 'unknown', 'expired') GROUP BY state",
      [channel],
    );
    const by = (s: string) => Number(o.find((r) => r.state === s)?.n ?? 0);
    return { inbound: Number(i?.n ?? 0), outbound: by('queued') + by('sending'), failed: by('failed') + by('expired'), unknown: by('unknown') };
  }
}
