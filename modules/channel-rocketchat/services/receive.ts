/**
 * What comes in: messages of the `__my_messages__` stream (every room the bot is in), and the catch-up run when the
 * stream is ready — for every room of the bot's subscriptions, the REST history (im/channels/groups.history by the
 * room's type) since its cursor, oldest first. Each message is emitted and its room's cursor moved only after the
 * journal commit; a failed commit rejects, which ends the connection, so the next catch-up reads it again.
 * A message → InboundMessage: `_id` as the platform id, `tmid` as the thread, room type `d` a direct message (c, p:
 * groups), mention gating by `mentions` naming the bot. The bot's own, system (`t`) and edited messages are skipped.
 */
import type { AdapterContext, InboundMessage } from '@talon/channels';
import type { SeenCursor } from './cursor.ts';
import type { RocketChatRest } from './rest.ts';

export interface RcMessage {
  _id: string;
  rid: string;
  msg?: string;
  tmid?: string;
  t?: string;
  ts: { $date: number } | string;
  editedAt?: unknown;
  u: { _id: string; username?: string; name?: string };
  mentions?: Array<{ _id?: string; username?: string }>;
}

const HISTORY: Record<string, string> = { d: 'im.history', c: 'channels.history', p: 'groups.history' };
const HISTORY_PAGE = 100;
const at = (ts: RcMessage['ts']) => (typeof ts === 'string' ? Date.parse(ts) : ts.$date);

export class Receiver {
  constructor(
    private readonly ctx: AdapterContext,
    private readonly rest: RocketChatRest,
    private readonly cursor: SeenCursor,
    private readonly me: string,
  ) {}

  /** A stream event's args: [message, {roomType, roomName, roomParticipant}]. */
  async onStream(args: unknown[]): Promise<void> {
    const message = args[0] as RcMessage | undefined;
    const extra = (args[1] ?? {}) as { roomType?: string };
    if (!message?._id || !message.rid || !message.u) return;
    await this.take(message, extra.roomType ?? 'c');
  }

  async catchUp(): Promise<void> {
    const floor = (await this.cursor.floor()) ?? 0;
    const { data } = await this.rest.call<{ update?: Array<{ rid: string; t: string }> }>('GET', '/subscriptions.get', undefined, this.ctx.signal);
    for (const room of data.update ?? []) {
      const endpoint = HISTORY[room.t];
      if (!endpoint) continue;
      const since = (await this.cursor.get(room.rid)) ?? floor;
      const messages = (await this.history(endpoint, room.rid, since)).filter((m) => at(m.ts) >= since).sort((a, b) => at(a.ts) - at(b.ts));
      for (const m of messages) await this.take(m, room.t);
    }
  }

  /**
   * Every message of a room since `since`. A history page holds the newest `count` of them, so a gap longer than a
   * page is read page by page (offset); reading only the first would move the cursor past the older ones unread.
   */
  private async history(endpoint: string, roomId: string, since: number): Promise<RcMessage[]> {
    const all: RcMessage[] = [];
    for (let offset = 0; ; offset += HISTORY_PAGE) {
      // `oldest` is exclusive: one millisecond earlier keeps an unread message of the cursor's own millisecond.
      const query = new URLSearchParams({ roomId, oldest: new Date(since - 1).toISOString(), count: String(HISTORY_PAGE), offset: String(offset) });
      const { data } = await this.rest.call<{ messages?: RcMessage[] }>('GET', `/${endpoint}?${query.toString()}`, undefined, this.ctx.signal);
      const page = data.messages ?? [];
      all.push(...page);
      if (page.length < HISTORY_PAGE) return all;
    }
  }

  private async take(m: RcMessage, roomType: string): Promise<void> {
    const message = this.toInbound(m, roomType);
    // Resolves after the journal commit (or when it knew the message already); a rejection ends this connection.
    if (message) await this.ctx.emit(message);
    await this.cursor.advance(m.rid, at(m.ts));
  }

  private toInbound(m: RcMessage, roomType: string): InboundMessage | undefined {
    if (m.u._id === this.me || m.t || m.editedAt || !m.msg?.trim()) return undefined;
    const isGroup = roomType !== 'd';
    const name = m.u.username ?? m.u.name;
    return {
      platformId: m._id,
      chatId: m.rid,
      ...(m.tmid ? { threadId: m.tmid } : {}),
      senderId: m.u._id,
      ...(name ? { senderName: name } : {}),
      text: m.msg,
      isGroup,
      ...(isGroup ? { mentioned: (m.mentions ?? []).some((x) => x._id === this.me) } : {}),
      sentAt: new Date(at(m.ts)).toISOString(),
    };
  }
}
