/**
 * What comes in: `posted` events from the WebSocket, and the catch-up run at each `hello` — for every channel the bot
 * is a member of whose last post is newer than its cursor, the posts created since, oldest first, read whole however
 * long the gap (history.ts). Each post is emitted and its channel's cursor moved only after the journal commit; a
 * failed commit rejects, which ends the connection, so the next one's catch-up reads the post again.
 */
import type { AdapterContext } from '@talon/channels';
import type { SeenCursor } from './cursor.ts';
import { HISTORY_LIMITS, postsSince, type HistoryLimits } from './history.ts';
import { toInbound, type Me, type MattermostPost, type PostContext } from './inbound.ts';
import type { MattermostRest } from './rest.ts';
import type { SocketEvent } from './socket.ts';

interface Channel {
  id: string;
  type: string;
  last_post_at?: number;
}

const parse = <T>(value: unknown): T | undefined => {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value) as T;
  } catch {
    return undefined;
  }
};

export class Receiver {
  constructor(
    private readonly ctx: AdapterContext,
    private readonly rest: MattermostRest,
    private readonly cursor: SeenCursor,
    private readonly me: () => Me,
    private readonly limits: HistoryLimits = HISTORY_LIMITS,
  ) {}

  async onEvent(ev: SocketEvent): Promise<void> {
    if (ev.event !== 'posted') return;
    const post = parse<MattermostPost>(ev.data.post);
    if (!post?.id || !post.channel_id) return;
    const where: PostContext = {
      channelType: typeof ev.data.channel_type === 'string' ? ev.data.channel_type : 'O',
      mentions: parse<string[]>(ev.data.mentions) ?? [],
      ...(typeof ev.data.sender_name === 'string' ? { senderName: ev.data.sender_name } : {}),
    };
    await this.take(post, where);
  }

  /** Reads what was posted while no connection was open. */
  async catchUp(): Promise<void> {
    const floor = (await this.cursor.floor()) ?? 0;
    const { data: channels } = await this.rest.call<Channel[]>('GET', '/users/me/channels', undefined, this.ctx.signal);
    for (const channel of channels) {
      const since = (await this.cursor.get(channel.id)) ?? floor;
      if (channel.last_post_at !== undefined && channel.last_post_at < since) continue;
      for await (const post of postsSince(this.rest, channel.id, since, this.ctx.signal, this.limits)) await this.take(post, { channelType: channel.type });
    }
  }

  private async take(post: MattermostPost, where: PostContext): Promise<void> {
    const message = await toInbound(post, where, this.me(), this.rest, this.ctx.signal);
    // Resolves after the journal commit (or when it knew the post already); a rejection ends this connection.
    if (message) await this.ctx.emit(message);
    await this.cursor.advance(post.channel_id, post.create_at);
  }
}
