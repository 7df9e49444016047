/**
 * One chunk → one REST chat.sendMessage (tmid for a thread reply) carrying a client `_id` made from the chunk's nonce:
 * Rocket.Chat stores the message under the client's id (its own web client does the same), and a second insert with
 * that id fails on the unique index, so a chunk re-sent after a crash is found with chat.getMessage instead of being
 * posted twice (`platformDedup`). Typing is the `user-activity` event of stream-notify-room over DDP.
 */
import { createHash } from 'node:crypto';
import type { ChannelKit, OutboundChunk } from '@talon/channels';
import { channelError, RocketChatError, toChannelError } from './errors.ts';
import type { RocketChatDdp } from './ddp.ts';
import type { RocketChatRest } from './rest.ts';

const ACCOUNT = 'account';
/** Meteor's Random.id alphabet and length, which message ids are checked against. */
const ALPHABET = '23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz';

export const messageId = (nonce: string): string =>
  [...createHash('sha256').update(`talon:${nonce}`).digest().subarray(0, 17)].map((b) => ALPHABET[b % ALPHABET.length]).join('');

export function rocketchatSender(
  rest: RocketChatRest,
  ddp: RocketChatDdp,
  me: () => { id: string; username: string } | undefined,
  kit: ChannelKit,
  signal: AbortSignal,
) {
  // Rocket.Chat's default REST limit is 10 calls a minute per endpoint for some and higher for chat.sendMessage.
  const limiter = new kit.SendLimiter({ account: { capacity: 10, perSecond: 5 }, chat: { capacity: 5, perSecond: 2 } });

  const call = async <T>(chatId: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const e = toChannelError(err);
      if (e.kind === 'rate_limited') limiter.retryAfter(e.retryAfterMs ?? 1000, ACCOUNT, chatId);
      throw e;
    }
  };

  /** The message already stored under this id by the bot (an earlier attempt that was not answered). */
  const existing = async (id: string, bot: string): Promise<boolean> => {
    try {
      const { data } = await rest.call<{ message?: { u?: { _id?: string } } }>('GET', `/chat.getMessage?msgId=${encodeURIComponent(id)}`, undefined, signal);
      return data.message?.u?._id === bot;
    } catch {
      return false;
    }
  };

  return {
    async send(chunk: OutboundChunk): Promise<{ messageId: string }> {
      const bot = me();
      if (!bot) throw channelError('not connected to Rocket.Chat yet', 'transient');
      await limiter.acquire(ACCOUNT, chunk.chatId, signal);
      const msg = chunk.media?.url ? `${chunk.text}\n${chunk.media.url}`.trim() : chunk.text;
      const _id = messageId(chunk.nonce);
      return call(chunk.chatId, async () => {
        try {
          const { data } = await rest.call<{ message?: { _id?: string } }>(
            'POST',
            '/chat.sendMessage',
            { message: { _id, rid: chunk.chatId, msg, ...(chunk.threadId ? { tmid: chunk.threadId } : {}) } },
            signal,
          );
          return { messageId: data.message?._id ?? _id };
        } catch (err) {
          if (err instanceof RocketChatError && err.status === 400 && (await existing(_id, bot.id))) return { messageId: _id };
          throw err;
        }
      });
    },
    async typing(target: { chatId: string; threadId?: string }): Promise<void> {
      const bot = me();
      // No open socket (reconnecting): the indicator is skipped, the reply is not held for it.
      if (bot)
        ddp.call('stream-notify-room', [`${target.chatId}/user-activity`, bot.username, ['user-typing'], target.threadId ? { tmid: target.threadId } : {}]);
    },
  };
}
