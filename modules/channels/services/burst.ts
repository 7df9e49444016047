/**
 * Optional coalescing (`message_coalesce_window_ms`, the reference's name; 0 = off): people often send a thought as
 * several short messages. With a window set, the first message of a burst waits until its sender has been quiet for
 * the window, and the sender's later messages in the same conversation join its turn as one user message. The joined
 * rows are marked answered in the adoption transaction, so each message is in the session exactly once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { InboundMessage } from '@talon/channels';
import type { InboundRow, Journal } from './journal.ts';

/** A steady stream does not hold the first message for ever: it waits at most this many windows. */
const MAX_WINDOWS = 5;

export interface BurstOptions {
  journal: Journal;
  windowMs: number;
  /** Whether a later message may join: it passes the access policy itself and is not a slash command. */
  admits(message: InboundMessage): boolean;
  signal: AbortSignal;
}

/** The sender's messages that join `row`'s turn once the sender paused, oldest first (none when the window is 0). */
export async function awaitBurst(row: InboundRow, o: BurstOptions): Promise<Array<{ row: InboundRow; message: InboundMessage }>> {
  if (o.windowMs <= 0) return [];
  const deadline = row.received_at + o.windowMs * MAX_WINDOWS;
  for (;;) {
    const others = await o.journal.burst(row);
    const last = Math.max(row.received_at, ...others.map((r) => r.received_at));
    const wait = Math.min(last + o.windowMs, deadline) - Date.now();
    if (wait <= 0 || o.signal.aborted) {
      return others.map((r) => ({ row: r, message: JSON.parse(r.payload) as InboundMessage })).filter((j) => o.admits(j.message));
    }
    await sleep(wait, undefined, { signal: o.signal }).catch(() => undefined);
  }
}

/** One user message of the burst: the texts line by line, every file kept. */
export function joinMessages(first: InboundMessage, later: readonly InboundMessage[]): InboundMessage {
  if (!later.length) return first;
  const all = [first, ...later];
  const media = all.flatMap((m) => m.media ?? []);
  return {
    ...first,
    text: all
      .map((m) => m.text)
      .filter(Boolean)
      .join('\n'),
    ...(media.length ? { media } : {}),
  };
}
