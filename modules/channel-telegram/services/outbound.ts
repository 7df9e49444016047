/**
 * One chunk → one Bot API call: Telegram HTML first and the chunk's plain text when Telegram cannot parse the HTML,
 * a file as sendPhoto (images Telegram shows inline) or sendDocument with the text as its caption while it fits,
 * into the chunk's topic and as a reply to the message it answers. Sends wait on the kit's limiter (Telegram's
 * per-bot and per-chat flood limits); a 429 pauses that chat for retry_after and is thrown as rate_limited.
 */
import { InputFile, type Api } from 'grammy';
import type { Message } from 'grammy/types';
import type { ChannelKit, OutboundChunk, OutboundMedia } from '@talon/channels';
import { apiSignal } from './client.ts';
import { isParseError, retryAfter, toChannelError } from './errors.ts';
import { messageIdIn, messageRef } from './inbound.ts';

/** Telegram's caption limit in UTF-16 units; a longer text goes as its own message after the file. */
const CAPTION_MAX = 1024;
const INLINE_PHOTOS = new Set(['image/jpeg', 'image/png', 'image/webp']);
/** The bot as a whole, for the limiter's account bucket. */
const ACCOUNT = 'bot';

export interface Sender {
  send(chunk: OutboundChunk): Promise<{ messageId: string }>;
  typing(target: { chatId: string; threadId?: string }): Promise<void>;
}

export function telegramSender(api: Api, token: string, kit: ChannelKit, abort: AbortSignal): Sender {
  const signal = apiSignal(abort);
  // About 30 messages a second per bot, and about one a second per chat with a short burst (Telegram's bot FAQ).
  const limiter = new kit.SendLimiter({ account: { capacity: 30, perSecond: 30 }, chat: { capacity: 3, perSecond: 1 } });

  /** A Bot API call; its failure as a ChannelError, a 429 also pausing the chat. */
  const call = async <T>(chatId: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const wait = retryAfter(err, kit.retryAfterMs);
      if (wait !== undefined) limiter.retryAfter(wait, ACCOUNT, chatId);
      throw toChannelError(err, token, wait);
    }
  };

  const place = (chunk: OutboundChunk) => {
    const replyTo = messageIdIn(chunk.replyTo, chunk.chatId);
    return {
      ...(chunk.threadId ? { message_thread_id: Number(chunk.threadId) } : {}),
      // A deleted original must not fail the reply: it then goes without the quote.
      ...(replyTo !== undefined ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}),
    };
  };

  /** Sends HTML, and the plain text when Telegram refuses the HTML. */
  const withPlainRetry = async (chatId: string, send: (text: string, html: boolean) => Promise<Message>, html: string, plain: string) => {
    try {
      return await call(chatId, () => send(html, true));
    } catch (err) {
      if (!isParseError(cause(err))) throw err;
      return call(chatId, () => send(plain, false));
    }
  };

  const sendText = (chunk: OutboundChunk) =>
    withPlainRetry(
      chunk.chatId,
      (text, html) => api.sendMessage(chunk.chatId, text, { ...place(chunk), ...(html ? { parse_mode: 'HTML' as const } : {}) }, signal),
      chunk.text,
      chunk.plain,
    );

  const sendFile = async (chunk: OutboundChunk, media: OutboundMedia): Promise<Message> => {
    const captioned = chunk.plain.length <= CAPTION_MAX && chunk.text.length > 0;
    const file = () => (media.data !== undefined ? new InputFile(Buffer.from(media.data, 'base64'), media.name) : media.url!);
    const send = (caption: string | undefined, html: boolean): Promise<Message> => {
      const other = { ...place(chunk), ...(caption ? { caption, ...(html ? { parse_mode: 'HTML' as const } : {}) } : {}) };
      return INLINE_PHOTOS.has(media.mediaType) ? api.sendPhoto(chunk.chatId, file(), other, signal) : api.sendDocument(chunk.chatId, file(), other, signal);
    };
    if (captioned) return withPlainRetry(chunk.chatId, send, chunk.text, chunk.plain);
    const sent = await call(chunk.chatId, () => send(undefined, false));
    if (chunk.text.trim()) await sendText(chunk);
    return sent;
  };

  return {
    async send(chunk) {
      await limiter.acquire(ACCOUNT, chunk.chatId, abort);
      const sent = chunk.media && (chunk.media.data !== undefined || chunk.media.url) ? await sendFile(chunk, chunk.media) : await sendText(chunk);
      return { messageId: messageRef(sent.chat.id, sent.message_id) };
    },
    async typing(target) {
      await call(target.chatId, () =>
        api.sendChatAction(target.chatId, 'typing', target.threadId ? { message_thread_id: Number(target.threadId) } : {}, signal),
      );
    },
  };
}

/** The GrammyError a ChannelError was made from. */
const cause = (err: unknown): unknown => (err instanceof Error && err.cause !== undefined ? err.cause : err);
