/**
 * One chunk → one POST /posts (root_id for a thread reply), a file first uploaded with POST /files and attached by
 * file_ids. pending_post_id is made from the chunk's nonce: the server drops a repeat of it inside its short dedup
 * window (about 30 s), which covers a retry after a lost answer but not a re-send after a crash, so the adapter does
 * not declare platformDedup. Typing is the WebSocket's user_typing action.
 */
import { createHash } from 'node:crypto';
import type { ChannelKit, OutboundChunk } from '@talon/channels';
import { channelError, toChannelError } from './errors.ts';
import type { Me } from './inbound.ts';
import type { MattermostRest } from './rest.ts';
import type { MattermostSocket } from './socket.ts';

const ACCOUNT = 'account';

export function mattermostSender(rest: MattermostRest, socket: MattermostSocket, me: () => Me | undefined, kit: ChannelKit, signal: AbortSignal) {
  // Mattermost's default limiter: 10 requests a second per user with a burst of 100.
  const limiter = new kit.SendLimiter({ account: { capacity: 20, perSecond: 8 }, chat: { capacity: 5, perSecond: 2 } });

  const call = async <T>(chatId: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const e = toChannelError(err);
      if (e.kind === 'rate_limited') limiter.retryAfter(e.retryAfterMs ?? 1000, ACCOUNT, chatId);
      throw e;
    }
  };

  return {
    async send(chunk: OutboundChunk): Promise<{ messageId: string }> {
      const bot = me();
      if (!bot) throw channelError('not connected to Mattermost yet', 'transient');
      await limiter.acquire(ACCOUNT, chunk.chatId, signal);
      let message = chunk.text;
      const fileIds: string[] = [];
      const media = chunk.media;
      if (media?.data !== undefined) {
        const data = Buffer.from(media.data, 'base64');
        fileIds.push(await call(chunk.chatId, () => rest.upload(chunk.chatId, media.name, media.mediaType, data, signal)));
      } else if (media?.url) message = `${message}\n${media.url}`.trim();
      const pending = `${bot.id}:${createHash('sha256').update(chunk.nonce).digest('hex').slice(0, 24)}`;
      const { data: post } = await call(chunk.chatId, () =>
        rest.call<{ id?: string }>(
          'POST',
          '/posts',
          { channel_id: chunk.chatId, message, root_id: chunk.threadId ?? '', pending_post_id: pending, ...(fileIds.length ? { file_ids: fileIds } : {}) },
          signal,
        ),
      );
      if (!post.id) throw channelError('Mattermost answered the post with no id', 'transient');
      return { messageId: post.id };
    },
    async typing(target: { chatId: string; threadId?: string }): Promise<void> {
      // No open socket (reconnecting): the indicator is skipped, the reply is not held for it.
      socket.action('user_typing', { channel_id: target.chatId, parent_id: target.threadId ?? '' });
    },
  };
}
