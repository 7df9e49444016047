/**
 * The event queue's long polling, one connection of the kit's reconnect loop. A queue is registered for message
 * events (raw Markdown, every stream the bot is subscribed to: a narrow cannot name several streams, so the `streams`
 * field is applied to each message); each poll names the last event id whose message is committed, which is what
 * tells the server it may drop the events up to it. A failed commit ends the connection with the position unmoved, so
 * the same events come again and the journal drops those it has. An expired queue (BAD_EVENT_QUEUE_ID: the server
 * collects a queue nobody polled for ten minutes) is registered again and the gap is read with GET /messages from the
 * last message seen, up to the new queue's first message, so nothing is lost in between.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import type { ZulipClient } from './client.ts';
import type { QueueCursor, QueuePosition } from './cursor.ts';
import { isBadQueue } from './errors.ts';
import { toInbound, type InboundDeps, type ZulipMessage } from './inbound.ts';

export type ReconnectLink = Parameters<ConstructorParameters<ChannelKit['Reconnector']>[0]['connect']>[0];

/** How long the server may hold a poll (it answers a heartbeat about every 50 s); the request's own limit. */
export const POLL_TIMEOUT_MS = 90_000;
/** Messages read per GET /messages page while catching up. */
const PAGE = 100;

interface ZulipEvent {
  id: number;
  type: string;
  message?: ZulipMessage;
  flags?: string[];
}

export class QueuePoller {
  constructor(
    private readonly ctx: AdapterContext,
    private readonly client: ZulipClient,
    private readonly cursor: QueueCursor,
    private readonly deps: () => InboundDeps,
  ) {}

  async connect(link: ReconnectLink): Promise<void> {
    let pos = (await this.cursor.get()) ?? (await this.register(link.signal));
    // The first poll of a connection answers at once (dont_block), so the connection is known good without a long wait.
    for (let first = true; !link.signal.aborted; first = false) {
      let events: ZulipEvent[];
      try {
        const res = await this.client.call<{ events?: ZulipEvent[] }>(
          'GET',
          '/events',
          { queue_id: pos.queueId, last_event_id: pos.lastEventId, ...(first ? { dont_block: true } : {}) },
          { timeoutMs: POLL_TIMEOUT_MS, signal: link.signal },
        );
        events = res.events ?? [];
      } catch (err) {
        if (!isBadQueue(err)) throw err;
        this.ctx.log.info({}, 'zulip event queue expired; registering a new one and catching up');
        pos = await this.register(link.signal, pos);
        continue;
      }
      link.ready();
      for (const ev of events) {
        if (ev.type === 'message' && ev.message) {
          await this.handle(ev.message, ev.flags);
          pos.lastMessageId = Math.max(pos.lastMessageId, ev.message.id);
        }
        pos.lastEventId = Math.max(pos.lastEventId, ev.id);
      }
      if (events.length) await this.cursor.set(pos);
      link.traffic();
    }
  }

  /** A new queue; after an expired one, the messages between the last one seen and the new queue's start first. */
  private async register(signal: AbortSignal, previous?: QueuePosition): Promise<QueuePosition> {
    const reg = await this.client.call<{ queue_id: string; last_event_id: number; max_message_id?: number }>(
      'POST',
      '/register',
      { event_types: ['message'], apply_markdown: false, client_gravatar: true, all_public_streams: false },
      { signal },
    );
    const upTo = reg.max_message_id ?? 0;
    // A first queue starts now: the organization's history is not new to the bot.
    const pos: QueuePosition = { queueId: reg.queue_id, lastEventId: reg.last_event_id, lastMessageId: previous?.lastMessageId ?? upTo };
    if (previous) await this.catchUp(pos, upTo, signal);
    await this.cursor.set(pos);
    return pos;
  }

  /** GET /messages after pos.lastMessageId up to `upTo` (later ones come through the new queue), page by page. */
  private async catchUp(pos: QueuePosition, upTo: number, signal: AbortSignal): Promise<void> {
    while (pos.lastMessageId < upTo && !signal.aborted) {
      const res = await this.client.call<{ messages?: ZulipMessage[]; found_newest?: boolean }>(
        'GET',
        '/messages',
        { anchor: pos.lastMessageId, include_anchor: false, num_before: 0, num_after: PAGE, apply_markdown: false, client_gravatar: true, narrow: [] },
        { signal },
      );
      const messages = (res.messages ?? []).filter((m) => m.id > pos.lastMessageId && m.id <= upTo);
      for (const m of messages) {
        await this.handle(m, m.flags);
        pos.lastMessageId = m.id;
      }
      await this.cursor.set(pos);
      if (!messages.length || res.found_newest) break;
    }
  }

  private async handle(message: ZulipMessage, flags: string[] | undefined): Promise<void> {
    const inbound = await toInbound(message, flags, this.deps());
    // Resolves after the journal commit (or when it knew the message already); a rejection ends this connection.
    if (inbound) await this.ctx.emit(inbound);
  }
}
