/**
 * A Telegram update → the channels module's InboundMessage: ids as `<chat>:<message>` (message ids are per chat, the
 * journal deduplicates per channel), forum topics as threads, group mention gating from the bot's own identity
 * (getMe), and files downloaded through getFile and the adapter's fetch. Content stays untrusted text.
 */
import { GrammyError, type Api } from 'grammy';
import type { Message, MessageEntity, Update, UserFromGetMe } from 'grammy/types';
import type { AdapterContext, InboundMedia, InboundMessage } from '@talon/channels';
import { apiSignal } from './client.ts';

/** The updates the adapter asks for: everything else is never fetched, so never needs an acknowledgement. */
export const ALLOWED_UPDATES = ['message'] as const;

/**
 * Files larger than this are named for the agent, not downloaded: the content is stored in the journal row and sent to
 * the model, and models refuse far smaller images (the Bot API's own getFile limit is 20 MB).
 */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;

export const messageRef = (chatId: number | string, messageId: number | string) => `${chatId}:${messageId}`;

/** The message id of a `<chat>:<message>` reference, when it belongs to this chat. */
export function messageIdIn(ref: string | undefined, chatId: string): number | undefined {
  if (!ref) return undefined;
  const cut = ref.lastIndexOf(':');
  if (cut < 0 || ref.slice(0, cut) !== chatId) return undefined;
  const id = Number(ref.slice(cut + 1));
  return Number.isSafeInteger(id) ? id : undefined;
}

export interface FileSource {
  api: Api;
  ctx: AdapterContext;
  /** `<apiRoot>/file/bot<token>/`: never shown to the agent, it carries the token. */
  fileRoot: string;
}

/** undefined: not a message the agent hears (a service message, the bot's own, a channel post). */
export async function toInbound(update: Update, me: UserFromGetMe, files: FileSource): Promise<InboundMessage | undefined> {
  const m = update.message;
  if (!m || !m.from || m.from.id === me.id) return undefined;
  const text = m.text ?? m.caption ?? '';
  const media = await downloads(m, files);
  if (!text && !media.length) return undefined;
  const isGroup = m.chat.type === 'group' || m.chat.type === 'supergroup';
  const name = [m.from.first_name, m.from.last_name].filter(Boolean).join(' ');
  return {
    platformId: messageRef(m.chat.id, m.message_id),
    chatId: String(m.chat.id),
    // Topics of a forum are threads; a plain reply chain in a group is not (the reply quotes its message instead).
    ...(m.is_topic_message && m.message_thread_id !== undefined ? { threadId: String(m.message_thread_id) } : {}),
    senderId: String(m.from.id),
    ...(name || m.from.username ? { senderName: name || m.from.username } : {}),
    text,
    isGroup,
    ...(isGroup ? { mentioned: mentions(m, me) } : {}),
    ...(media.length ? { media } : {}),
    sentAt: new Date(m.date * 1000).toISOString(),
  };
}

/** An @username mention of the bot, a text mention of its user, a /command@bot, or a reply to one of its messages. */
export function mentions(m: Message, me: UserFromGetMe): boolean {
  if (m.reply_to_message?.from?.id === me.id) return true;
  const text = m.text ?? m.caption ?? '';
  const entities: MessageEntity[] = m.entities ?? m.caption_entities ?? [];
  const handle = `@${me.username}`.toLowerCase();
  return entities.some((e) => {
    const part = text.slice(e.offset, e.offset + e.length).toLowerCase();
    if (e.type === 'mention') return part === handle;
    if (e.type === 'text_mention') return e.user.id === me.id;
    if (e.type === 'bot_command') return part.endsWith(handle);
    return false;
  });
}

/** The message's file (the largest photo size), fetched; one over the cap or refused (gone) becomes a note. */
async function downloads(m: Message, files: FileSource): Promise<InboundMedia[]> {
  const photo = m.photo?.at(-1);
  const item = m.document ?? m.audio ?? m.video ?? m.voice ?? m.animation ?? (photo ? { ...photo, mime_type: 'image/jpeg' } : undefined);
  if (!item) return [];
  const mediaType = item.mime_type ?? 'application/octet-stream';
  const name = 'file_name' in item && item.file_name ? item.file_name : undefined;
  if ((item.file_size ?? 0) > MAX_MEDIA_BYTES) return [{ mediaType, ...(name ? { name } : {}) }];
  let path: string | undefined;
  try {
    path = (await files.api.getFile(item.file_id, apiSignal(files.ctx.signal))).file_path;
  } catch (err) {
    // A 4xx (a file over the Bot API's 20 MB) will not change on redelivery; anything else is thrown, so the
    // update is not acknowledged and comes again.
    if (!(err instanceof GrammyError)) throw err;
    files.ctx.log.warn({ code: err.error_code, description: err.description }, 'telegram file not downloadable');
  }
  if (!path) return [{ mediaType, ...(name ? { name } : {}) }];
  const res = await files.ctx.fetch({ url: files.fileRoot + path, method: 'GET', timeoutMs: 60_000, maxBytes: MAX_MEDIA_BYTES, maxRedirects: 0 });
  if (res.status >= 500) throw new Error(`telegram file download failed with status ${res.status}`);
  if (res.status !== 200 || res.truncated) return [{ mediaType, ...(name ? { name } : {}) }];
  return [{ mediaType, name: name ?? path.split('/').at(-1)!, data: res.body.toString('base64') }];
}
