/**
 * Messages in, in Gateway order: each MESSAGE_CREATE for the agent has its attachments downloaded and is committed to
 * the journal before the next; a failed download or commit is tried again with backoff. The RESUME sequence is held
 * below a message until its commit (GatewaySession), so a connection lost before it gets the message replayed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { GatewayMessageCreateDispatchData } from '@discordjs/core';
import type { AdapterContext, InboundMessage } from '@talon/channels';
import { fetchAttachments } from './attachments.ts';
import { toInbound, type Bot } from './message.ts';
import type { GatewaySession } from './session.ts';

/** Full jitter, capped at 30 s. */
export const backoffMs = (attempt: number) => Math.random() * Math.min(30_000, 1_000 * 2 ** attempt);

export interface InboundDeps {
  ctx: AdapterContext;
  session: GatewaySession;
  bot: Bot;
  apiUrl: string;
  /** The connection's signal: a stop ends the retries (the message is replayed on the next connection). */
  signal: AbortSignal;
}

/** Takes MESSAGE_CREATE dispatches in Gateway order. */
export function inboundQueue(deps: InboundDeps): (data: GatewayMessageCreateDispatchData, sequence: number) => void {
  let chain = Promise.resolve();
  return (data, sequence) => {
    const message = toInbound(data, deps.bot);
    if (!message) return;
    deps.session.hold(sequence);
    chain = chain.then(() => commit(deps, message, data, sequence));
  };
}

async function commit({ ctx, session, apiUrl, signal }: InboundDeps, message: InboundMessage, data: GatewayMessageCreateDispatchData, sequence: number) {
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      const media = data.attachments.length ? await fetchAttachments(ctx, apiUrl, data.attachments) : [];
      await ctx.emit(media.length ? { ...message, media } : message);
      break;
    } catch (err) {
      ctx.log.warn({ err: (err as Error).message, platformId: message.platformId }, 'discord message not committed; trying again');
      await sleep(backoffMs(attempt), undefined, { signal }).catch(() => undefined);
    }
  }
  session.release(sequence);
}
