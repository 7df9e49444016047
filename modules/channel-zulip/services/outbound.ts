/**
 * One chunk → one Zulip message (POST /messages): a direct message to the chat's user ids, or a stream message in
 * the chat's stream under the thread's topic. A file is uploaded (POST /user_uploads) and linked from the message as
 * `[name](/user_uploads/…)`, which Zulip shows inline; a file known only by URL goes as a link. Typing is
 * POST /typing for the DM's users or the stream's topic.
 */
import type { ChannelKit, OutboundChunk } from '@talon/channels';
import type { Params, ZulipClient } from './client.ts';
import { channelError, toChannelError } from './errors.ts';

/** Where a stream reply goes when no thread names a topic (a send to a stream chat of the channels service). */
const DEFAULT_TOPIC = 'general chat';
const ACCOUNT = 'account';

export interface Sender {
  send(chunk: OutboundChunk): Promise<{ messageId: string }>;
  typing(target: { chatId: string; threadId?: string }): Promise<void>;
}

type Target = { kind: 'dm'; users: number[] } | { kind: 'stream'; streamId: number };

export function parseChat(chatId: string): Target {
  const dm = /^dm:(\d+(?:,\d+)*)$/.exec(chatId);
  if (dm) return { kind: 'dm', users: dm[1]!.split(',').map(Number) };
  const stream = /^stream:(\d+)$/.exec(chatId);
  if (stream) return { kind: 'stream', streamId: Number(stream[1]) };
  throw channelError(`'${chatId.slice(0, 80)}' is no Zulip chat (dm:<user ids> or stream:<stream id>)`, 'permanent');
}

export function zulipSender(client: ZulipClient, kit: ChannelKit, signal: AbortSignal): Sender {
  // Zulip allows 200 API requests a minute per user by default; a 429 pauses the whole account.
  const limiter = new kit.SendLimiter({ account: { capacity: 20, perSecond: 3 }, chat: { capacity: 5, perSecond: 1 } });

  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const e = toChannelError(err);
      if (e.kind === 'rate_limited') limiter.retryAfter(e.retryAfterMs ?? 1000, ACCOUNT);
      throw e;
    }
  };

  return {
    async send(chunk) {
      const target = parseChat(chunk.chatId);
      await limiter.acquire(ACCOUNT, chunk.chatId, signal);
      let content = chunk.text;
      const media = chunk.media;
      if (media?.data !== undefined) {
        const bytes = Buffer.from(media.data, 'base64');
        const uri = await call(() => client.upload(bytes, media.mediaType, media.name, signal));
        content = `${content}\n[${linkText(media.name)}](${uri})`.trim();
      } else if (media?.url) content = `${content}\n[${linkText(media.name)}](${media.url})`.trim();
      const params: Params =
        target.kind === 'dm'
          ? { type: 'private', to: target.users, content }
          : { type: 'stream', to: target.streamId, topic: chunk.threadId || DEFAULT_TOPIC, content };
      const res = await call(() => client.call<{ id?: number }>('POST', '/messages', params, { signal }));
      if (typeof res.id !== 'number') throw channelError('the Zulip server answered the send with no message id', 'transient');
      return { messageId: String(res.id) };
    },
    async typing(target) {
      const t = parseChat(target.chatId);
      const params: Params =
        t.kind === 'dm'
          ? { op: 'start', type: 'direct', to: t.users }
          : { op: 'start', type: 'stream', stream_id: t.streamId, topic: target.threadId || DEFAULT_TOPIC };
      await call(() => client.call('POST', '/typing', params, { signal }));
    },
  };
}

/** A file name as a Markdown link's text: brackets would end it early. */
const linkText = (name: string) => name.replace(/[[\]\n]/g, '_');
