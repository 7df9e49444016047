/**
 * A WhatsApp Web message (Baileys' WAMessage from `messages.upsert`) read into an InboundMessage. Only new messages
 * (`notify`) from others are heard: this account's own (fromMe, from the phone too), status broadcasts, reactions,
 * protocol and system messages are not something to answer. The text is the conversation, an extended text, or a
 * file's caption, found inside the wrappers WhatsApp puts around some messages (disappearing, view once, a document
 * with a caption). In a group (`@g.us`) the bot is mentioned when its jid (phone number or LID) is among the
 * message's mentionedJid, or when the message replies to one of its own. The platform id is the message id: Baileys
 * re-emits messages after a reconnect, and the journal keeps one of each. The content is untrusted: each field is
 * checked for its type and what does not fit is skipped.
 */
import type { InboundMedia, InboundMessage } from '@talon/channels';
import type { WaMessage, WaSocket } from '@talon/channel-whatsapp';
import { obj, sentAtOf, str, type Obj } from '../inbound.ts';

/** Files in up to this size are downloaded; larger ones are named for the agent. */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;

/** The wrappers whose `message` holds the real content. */
const WRAPPERS = ['ephemeralMessage', 'viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension', 'documentWithCaptionMessage'];
/** Media message fields, and the kind each is. */
const MEDIA = { imageMessage: 'image', videoMessage: 'video', audioMessage: 'audio', documentMessage: 'document', stickerMessage: 'sticker' } as const;

/** A media part to download: its kind, type, name and announced size. */
export interface WebMediaRef {
  kind: (typeof MEDIA)[keyof typeof MEDIA];
  mediaType: string;
  name?: string;
  size?: number;
}

export interface ReadWebMessage {
  message: Omit<InboundMessage, 'media'>;
  media?: WebMediaRef;
}

/** `4915112345678:12@s.whatsapp.net` → `4915112345678@s.whatsapp.net`: a jid without its device. */
const bareJid = (jid: string): string => jid.replace(/:\d+@/, '@');
/** A jid's user part (the phone number of an `@s.whatsapp.net` jid). */
const userOf = (jid: string): string => bareJid(jid).split('@')[0]!;

/** The bot's own addresses, as mentions and quotes name it. */
export const selfJids = (user: { id: string; lid?: string } | undefined): Set<string> =>
  new Set([user?.id, user?.lid].filter((j): j is string => Boolean(j)).map(bareJid));

/** The content inside WhatsApp's wrappers (at most a few levels deep). */
function unwrap(content: unknown): Obj | undefined {
  let current = obj(content);
  for (let depth = 0; current && depth < 4; depth++) {
    const wrapper = WRAPPERS.map((w) => obj(obj(current![w])?.message)).find(Boolean);
    if (!wrapper) break;
    current = wrapper;
  }
  return current;
}

/** The message for the journal, or undefined when it is not one to answer. */
export function readWebMessage(m: WaMessage, self: Set<string>): ReadWebMessage | undefined {
  const key = m.key;
  const chatId = str(key?.remoteJid);
  const id = str(key?.id);
  if (!chatId || !id || key.fromMe || chatId === 'status@broadcast' || chatId.endsWith('@broadcast') || chatId.endsWith('@newsletter')) return undefined;
  const content = unwrap(m.message);
  if (!content) return undefined;
  const isGroup = chatId.endsWith('@g.us');
  const sender = isGroup ? str(key.participant) : chatId;
  if (!sender) return undefined;
  const { text, media, context } = partsOf(content);
  if (text === undefined && !media) return undefined;
  const name = str(m.pushName);
  const sentAt = timestampOf(m.messageTimestamp);
  return {
    message: {
      platformId: id,
      chatId,
      senderId: senderIdOf(sender, isGroup ? key.participantAlt : key.remoteJidAlt),
      ...(name ? { senderName: name } : {}),
      text: text ?? '',
      isGroup,
      ...(isGroup ? { mentioned: mentions(context, self) } : {}),
      ...(sentAt ? { sentAt } : {}),
    },
    ...(media ? { media } : {}),
  };
}

/** The text, the file and the context info (mentions, the quoted message's author) of a content. */
function partsOf(content: Obj): { text?: string; media?: WebMediaRef; context?: Obj } {
  const conversation = str(content.conversation);
  if (conversation) return { text: conversation };
  const extended = obj(content.extendedTextMessage);
  if (extended) return { text: str(extended.text), context: obj(extended.contextInfo) };
  for (const [field, kind] of Object.entries(MEDIA) as Array<[keyof typeof MEDIA, WebMediaRef['kind']]>) {
    const part = obj(content[field]);
    if (!part) continue;
    const size = Number(part.fileLength);
    const mediaType = str(part.mimetype)?.split(';')[0]?.trim() || (kind === 'sticker' ? 'image/webp' : 'application/octet-stream');
    const name = str(part.fileName);
    const media: WebMediaRef = { kind, mediaType, ...(name ? { name } : {}), ...(Number.isFinite(size) && size > 0 ? { size } : {}) };
    return { text: str(part.caption), media, context: obj(part.contextInfo) };
  }
  return {};
}

/** Mentioned by jid, or answered: the quoted message was the bot's. */
function mentions(context: Obj | undefined, self: Set<string>): boolean {
  if (!context) return false;
  const named = Array.isArray(context.mentionedJid) ? context.mentionedJid : [];
  if (named.some((j) => typeof j === 'string' && self.has(bareJid(j)))) return true;
  const quoted = str(context.participant);
  return Boolean(quoted && obj(context.quotedMessage) && self.has(bareJid(quoted)));
}

/**
 * The sender as its phone number (`4915112345678`, as Cloud mode and owners write it) when WhatsApp names one, be it
 * the jid or its alternative; otherwise the jid as it came (a LID).
 */
function senderIdOf(jid: string, alt: string | null | undefined): string {
  for (const candidate of [jid, alt]) if (typeof candidate === 'string' && candidate.endsWith('@s.whatsapp.net')) return userOf(candidate);
  return bareJid(jid);
}

/** Seconds (a number, a numeric string or a protobuf Long) as ISO, when it is a plausible time. */
function timestampOf(value: unknown): string | undefined {
  const long = obj(value);
  const seconds = long && typeof long.toNumber === 'function' ? Number((long.toNumber as () => number)()) : Number(value);
  return sentAtOf(seconds);
}

/** The file of a message: its content up to MAX_MEDIA_BYTES, named only when larger or when the download fails. */
export async function downloadFile(
  sock: Pick<WaSocket, 'downloadMedia'>,
  m: WaMessage,
  ref: WebMediaRef,
  log: { warn(obj: object, msg?: string): void },
): Promise<InboundMedia> {
  const named: InboundMedia = { mediaType: ref.mediaType, name: ref.name ?? ref.kind };
  // The announced size first: a file known to be too large is not fetched at all.
  if (ref.size !== undefined && ref.size > MAX_MEDIA_BYTES) return named;
  try {
    const bytes = await sock.downloadMedia(m);
    if (bytes.length > MAX_MEDIA_BYTES) return named;
    return { mediaType: ref.mediaType, ...(ref.name ? { name: ref.name } : {}), data: bytes.toString('base64') };
  } catch (err) {
    log.warn({ err: (err as Error).message, kind: ref.kind }, 'whatsapp web: a file could not be downloaded; named for the agent');
    return named;
  }
}
