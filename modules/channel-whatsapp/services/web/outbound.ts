/**
 * A chunk as WhatsApp Web messages: its text, or its file as an image (JPEG, PNG, WebP), a video (MP4, 3GPP), a voice
 * note or a document, the text riding as the caption. Voice notes are Ogg/Opus with `ptt` (WhatsApp plays nothing else
 * as one): Ogg is sent as it is, other audio is converted by the media module when it runs (`convertAudio`), and sent
 * as a document when it does not or the conversion fails. A voice note takes no caption, so its text goes first as a
 * message of its own. Chat ids are jids; a bare phone number (an owner as configured, `+49 151 …`) is the jid of that
 * number's direct chat.
 */
import type { ChannelError, OutboundChunk } from '@talon/channels';
import type { WaContent } from '@talon/channel-whatsapp';
import { channelError, RATE_WAIT_MS } from '../errors.ts';

const IMAGE = new Set(['image/jpeg', 'image/png', 'image/webp']);
const VIDEO = new Set(['video/mp4', 'video/3gpp']);
const OGG = new Set(['audio/ogg', 'audio/opus']);
const VOICE_MIMETYPE = 'audio/ogg; codecs=opus';

/** The jid a chat id names: a jid as it is, a phone number (digits, with any `+`, spaces or dashes) as its DM. */
export function toJid(chatId: string): string {
  if (chatId.includes('@')) return chatId;
  const digits = chatId.replace(/[\s+\-().]/g, '');
  if (!/^\d{5,20}$/.test(digits)) throw channelError('permanent', `whatsapp: '${chatId}' is neither a jid nor a phone number`);
  return `${digits}@s.whatsapp.net`;
}

export interface OutboundDeps {
  /** The media module's audio conversion to Ogg/Opus, when it runs. */
  toOpus?: (bytes: Buffer) => Promise<Buffer>;
  log: { warn(obj: object, msg?: string): void };
}

/** The messages one chunk is sent as, in order. */
export async function contentsOf(chunk: OutboundChunk, deps: OutboundDeps): Promise<WaContent[]> {
  const media = chunk.media;
  // A file given by URL went into the text as a link (the channels module): only content is uploaded.
  if (media?.data === undefined) return [{ text: chunk.text }];
  const bytes = Buffer.from(media.data, 'base64');
  const type = media.mediaType.split(';')[0]!.trim().toLowerCase();
  const caption = chunk.text ? { caption: chunk.text } : {};
  if (IMAGE.has(type)) return [{ image: bytes, mimetype: type, ...caption }];
  if (VIDEO.has(type)) return [{ video: bytes, mimetype: type, ...caption }];
  if (type.startsWith('audio/')) {
    const voice = await voiceNote(bytes, type, deps);
    if (voice) return [...(chunk.text ? [{ text: chunk.text }] : []), { audio: voice, mimetype: VOICE_MIMETYPE, ptt: true }];
  }
  return [{ document: bytes, mimetype: type || 'application/octet-stream', fileName: media.name, ...caption }];
}

async function voiceNote(bytes: Buffer, type: string, deps: OutboundDeps): Promise<Buffer | undefined> {
  if (OGG.has(type)) return bytes;
  if (!deps.toOpus) return undefined;
  try {
    return await deps.toOpus(bytes);
  } catch (err) {
    deps.log.warn({ err: (err as Error).message, mediaType: type }, 'whatsapp web: audio not converted to Ogg/Opus; sent as a document');
    return undefined;
  }
}

/**
 * A failed send as a ChannelError: WhatsApp's rate limit (`rate-overlimit`, 429) waits; a refusal of the message
 * itself (another 4xx) fails the chunk; a closed or lost connection and anything else is retried.
 */
export function sendError(err: unknown): ChannelError {
  const e = err as Error & { output?: { statusCode?: number }; data?: unknown };
  const code = e?.output?.statusCode;
  const message = `whatsapp web: the send failed (${code ?? 'no code'}): ${e?.message ?? String(err)}`;
  if (code === 429 || /rate-overlimit/.test(e?.message ?? '')) return channelError('rate_limited', message, RATE_WAIT_MS);
  if (code !== undefined && code >= 400 && code < 500 && code !== 408 && code !== 428) return channelError('permanent', message);
  return channelError('transient', message);
}
