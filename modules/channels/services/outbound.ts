/**
 * Sending a reply: its chunks are rows (queued with the reply, see Journal.queueReply); each is claimed `sending` for
 * one platform call and marked `sent` with the platform's id. A 429 waits its retry time and is not a failure; a
 * transient error is retried with backoff; bad credentials or a permanent refusal fail the row, keeping its payload.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelConnection, OutboundChunk } from '@talon/channels';
import { asChannelError } from './channel-error.ts';
import type { Journal, OutboundRow } from './journal.ts';

const MAX_TRANSIENT_FAILURES = 5;

export interface OutboundDeps {
  journal: Journal;
  connection(channel: string): ChannelConnection | undefined;
  onSent(row: OutboundRow, messageId: string): void;
  onFailed(row: OutboundRow, state: 'failed' | 'unknown' | 'expired', error: string): void;
  signal: AbortSignal;
  /** Backoff before the n-th retry of a transient error (ms). */
  backoffMs?(n: number): number;
}

export class Outbound {
  /** One sender per chat: a chat's replies go out in the order they were queued. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly deps: OutboundDeps) {}

  /** Sends the reply's queued chunks in order; resolves when every chunk ended (sent, failed, expired). */
  deliver(replyId: string, chatKey: string): Promise<void> {
    const previous = this.chains.get(chatKey) ?? Promise.resolve();
    const next = previous.then(() => this.sendReply(replyId));
    const settled = next.catch(() => undefined);
    this.chains.set(chatKey, settled);
    void settled.then(() => {
      if (this.chains.get(chatKey) === settled) this.chains.delete(chatKey);
    });
    return next;
  }

  private async sendReply(replyId: string): Promise<void> {
    let failedBefore: string | undefined;
    for (const row of await this.deps.journal.chunks(replyId)) {
      if (row.state !== 'queued') continue;
      if (failedBefore) {
        await this.deps.journal.unsent(row.id, 'failed', `not sent: an earlier chunk failed (${failedBefore})`);
        continue;
      }
      const outcome = await this.sendChunk(row);
      if (outcome) failedBefore = outcome;
    }
  }

  /** One chunk; returns the error when it failed for good. */
  private async sendChunk(row: OutboundRow): Promise<string | undefined> {
    const chunk = JSON.parse(row.payload) as OutboundChunk;
    for (let failures = 0; !this.deps.signal.aborted;) {
      const claim = await this.deps.journal.claimChunk(row.id);
      if (claim === 'expired') {
        this.deps.onFailed(row, 'expired', 'not sent before not_after');
        return 'expired';
      }
      if (claim === 'taken') return undefined;
      const connection = this.deps.connection(row.channel);
      if (!connection) {
        await this.deps.journal.unsent(row.id, 'failed', 'the channel is not running');
        this.deps.onFailed(row, 'failed', 'the channel is not running');
        return 'the channel is not running';
      }
      try {
        const { messageId } = await connection.send(chunk);
        await this.deps.journal.sent(row.id, messageId);
        this.deps.onSent(row, messageId);
        return undefined;
      } catch (err) {
        const e = asChannelError(err);
        const message = err instanceof Error ? err.message : String(err);
        if (e?.kind === 'rate_limited') {
          // The platform's own wait; not counted as a failure.
          await this.deps.journal.unsent(row.id, 'queued', message);
          await sleep(e.retryAfterMs ?? 1000, undefined, { signal: this.deps.signal }).catch(() => undefined);
          continue;
        }
        if ((!e || e.kind === 'transient') && ++failures < MAX_TRANSIENT_FAILURES) {
          await this.deps.journal.unsent(row.id, 'queued', message);
          await sleep(this.deps.backoffMs?.(failures) ?? Math.min(30_000, 500 * 2 ** failures), undefined, { signal: this.deps.signal }).catch(() => undefined);
          continue;
        }
        await this.deps.journal.unsent(row.id, 'failed', message);
        this.deps.onFailed(row, 'failed', message);
        return message;
      }
    }
    return undefined;
  }
}
