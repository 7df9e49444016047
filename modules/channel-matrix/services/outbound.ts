/**
 * One chunk → one room event, PUT with a transaction id made from the chunk's nonce (the outbound journal row's id):
 * the homeserver answers a repeated transaction id with the event it made the first time, so a chunk re-sent after a
 * crash between the send and its `sent` row is never posted twice (`platformDedup`). A file is uploaded to the media
 * repository and sent as m.image / m.audio / m.video / m.file (its own transaction id), then the text. Text goes as
 * `body` (plain) with the same text as org.matrix.custom.html.
 */
import type { ChannelKit, OutboundChunk, OutboundMedia } from '@talon/channels';
import { enc, type Json, type MatrixClient } from './client.ts';
import { channelError, toChannelError } from './errors.ts';
import type { Rooms } from './rooms.ts';

/** The homeserver's typing timeout: longer than the channels module's 4 s refresh, short enough to lapse after a turn. */
const TYPING_TIMEOUT_MS = 6_000;
/** An event is at most 65,536 bytes of JSON: past this the HTML copy is dropped and the plain body goes alone. */
const MAX_CONTENT_BYTES = 60_000;
const ACCOUNT = 'account';

export interface Sender {
  send(chunk: OutboundChunk): Promise<{ messageId: string }>;
  typing(target: { chatId: string; threadId?: string }): Promise<void>;
}

export function matrixSender(client: MatrixClient, rooms: Rooms, kit: ChannelKit, signal: AbortSignal): Sender {
  // Homeservers limit messages per user (Synapse: a burst of 10, then a few a second); a 429 pauses the room.
  const limiter = new kit.SendLimiter({ account: { capacity: 10, perSecond: 5 }, chat: { capacity: 5, perSecond: 2 } });

  const call = async <T>(roomId: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const e = toChannelError(err);
      if (e.kind === 'rate_limited') limiter.retryAfter(e.retryAfterMs ?? 1000, ACCOUNT, roomId);
      throw e;
    }
  };

  const put = (chunk: OutboundChunk, txnId: string, content: Json) =>
    call(chunk.chatId, async () => {
      const res = await client.call<{ event_id?: string }>(
        'PUT',
        `/rooms/${enc(chunk.chatId)}/send/m.room.message/${enc(txnId)}`,
        { ...content, ...relation(chunk) },
        { signal },
      );
      if (!res.event_id) throw channelError('the homeserver answered the send with no event_id', 'transient');
      rooms.noteSender(res.event_id, rooms.me);
      return res.event_id;
    });

  const sendFile = async (chunk: OutboundChunk, media: OutboundMedia & { data: string }): Promise<string> => {
    const bytes = Buffer.from(media.data, 'base64');
    const url = await call(chunk.chatId, () => client.upload(bytes, media.mediaType, media.name, signal));
    const msgtype = media.mediaType.startsWith('image/')
      ? 'm.image'
      : media.mediaType.startsWith('audio/')
        ? 'm.audio'
        : media.mediaType.startsWith('video/')
          ? 'm.video'
          : 'm.file';
    return put(chunk, `${chunk.nonce}.file`, { msgtype, body: media.name, filename: media.name, url, info: { mimetype: media.mediaType, size: bytes.length } });
  };

  return {
    async send(chunk) {
      if (rooms.isEncrypted(chunk.chatId)) throw channelError(`room ${chunk.chatId} is end-to-end encrypted: this adapter does not send into it`, 'permanent');
      await limiter.acquire(ACCOUNT, chunk.chatId, signal);
      const media = chunk.media;
      let fileEvent: string | undefined;
      let { text, plain } = chunk;
      if (media?.data !== undefined) fileEvent = await sendFile(chunk, { ...media, data: media.data });
      else if (media?.url) {
        // A file known only by its URL goes as a link.
        plain = `${plain}\n${media.url}`.trim();
        text = `${text}\n${escapeHtml(media.url)}`.trim();
      }
      if (!plain.trim()) return { messageId: fileEvent! };
      const html = toMatrixHtml(text);
      const content: Json = { msgtype: 'm.text', body: plain, format: 'org.matrix.custom.html', formatted_body: html };
      if (Buffer.byteLength(JSON.stringify(content)) > MAX_CONTENT_BYTES) {
        delete content.format;
        delete content.formatted_body;
      }
      const eventId = await put(chunk, chunk.nonce, content);
      return { messageId: fileEvent ?? eventId };
    },
    async typing(target) {
      await call(target.chatId, () =>
        client.call('PUT', `/rooms/${enc(target.chatId)}/typing/${enc(rooms.me)}`, { typing: true, timeout: TYPING_TIMEOUT_MS }, { signal }),
      );
    },
  };
}

/** A thread reply (m.thread, with the in-reply-to fallback for clients without threads) or a plain reply. */
function relation(chunk: OutboundChunk): Json {
  if (chunk.threadId)
    return {
      'm.relates_to': {
        rel_type: 'm.thread',
        event_id: chunk.threadId,
        is_falling_back: !chunk.replyTo,
        'm.in_reply_to': { event_id: chunk.replyTo ?? chunk.threadId },
      },
    };
  return chunk.replyTo ? { 'm.relates_to': { 'm.in_reply_to': { event_id: chunk.replyTo } } } : {};
}

/**
 * The kit's Telegram HTML (b, i, s, code, pre, a, blockquote: all within Matrix's allowed HTML) with its line breaks
 * as <br>, which HTML needs outside <pre>.
 */
export function toMatrixHtml(telegramHtml: string): string {
  return telegramHtml
    .split(/(<pre[^>]*>[\s\S]*?<\/pre>)/)
    .map((part, i) => (i % 2 ? part : part.replace(/\n/g, '<br>')))
    .join('');
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
