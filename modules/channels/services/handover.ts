/**
 * Work no process holds, taken by one running its channel: rows of a dead process (or this one before a restart) are
 * recovered, and chunks queued by a process on standby are handed to the process running the channel through the
 * change feed, while the standby one waits for their outcome.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelsContext } from './channels.ts';
import type { Inbound } from './inbound.ts';
import type { Journal, OutboundRow } from './journal.ts';
import type { Outbound } from './outbound.ts';
import type { Runtime } from './runtime.ts';

/** The change-feed topic of chunks queued by a process on standby (key: the channel), for the one running it. */
export const HANDED_OVER_TOPIC = 'channels.handed_over';
/** How long a send made on standby waits for the running process to report its outcome. */
const HANDED_OVER_WAIT_MS = 30_000;

export interface RecoveryParts {
  journal: Journal;
  runtime: Runtime;
  outbound: Outbound;
  inbound: Inbound;
}

/** Takes over the work this process may take now; chunks handed over later are delivered as their note comes. */
export function recovery(ctx: ChannelsContext, parts: RecoveryParts): { recover(): Promise<void> } {
  const { journal, runtime, outbound, inbound } = parts;

  /** Queued chunks no process holds (a dead one's, or handed over by one on standby), of the channels running here. */
  async function deliverOrphans(): Promise<void> {
    for (const { reply_id, channel } of await journal.orphanReplies()) {
      if (!runtime.get(channel)?.connection || !(await journal.adoptOrphanChunks(reply_id))) continue;
      const first = (await journal.chunks(reply_id))[0];
      if (first) void ctx.track(outbound.deliver(reply_id, `${first.channel}\u0000${first.chat_id}`));
    }
  }
  // '' (notes may have been missed): any channel; deliverOrphans takes only those running here.
  ctx.changes.on(HANDED_OVER_TOPIC, (channel) => {
    if (!channel || runtime.get(channel)?.connection) void ctx.track(deliverOrphans());
  });

  /** Rows this process may take: those of dead processes (released) and its own from before a restart. */
  async function recover(): Promise<void> {
    for (const row of await journal.open()) {
      if (row.node === null && !(await journal.claim(row.id))) continue;
      void ctx.track(inbound.handle(row));
    }
    await deliverOrphans();
  }
  return { recover };
}

/** The rows of a reply handed to the process running its channel, once each ended (or the wait did: 504). */
export async function handedOver(ctx: ChannelsContext, journal: Journal, replyId: string): Promise<OutboundRow[]> {
  const ended = async () => {
    const rows = await journal.chunks(replyId);
    return rows.every((row) => row.state !== 'queued' && row.state !== 'sending') ? rows : undefined;
  };
  const deadline = Date.now() + HANDED_OVER_WAIT_MS;
  for (let rows = await ended(); ; rows = await ended()) {
    if (rows) return rows;
    if (Date.now() > deadline || ctx.signal.aborted) {
      throw Object.assign(new Error(`handed to the process running the channel; not confirmed sent within ${HANDED_OVER_WAIT_MS / 1000} s (see the journal)`), {
        statusCode: 504,
      });
    }
    await sleep(100, undefined, { signal: ctx.signal }).catch(() => undefined);
  }
}
