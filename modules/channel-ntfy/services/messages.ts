/**
 * ntfy's JSON stream events and the inbound messages they become. A topic has no members or sender names: the topic
 * is the conversation and its sender (whoever may publish to it), a message's title comes first in the text, an
 * attachment comes as a link. The bot's own replies carry the REPLY_TAG and are skipped. Events are untrusted: only
 * these fields are read, checked for their types.
 */
import type { InboundMessage } from '@talon/channels';

/** The tag on every reply the bot publishes: the stream delivers them back to it, and they are no message for it. */
export const REPLY_TAG = 'talon-reply';

export type NtfyEvent =
  | { event: 'open' | 'keepalive'; time: number }
  | { event: 'message'; id: string; time: number; topic: string; message: string; title?: string; tags?: string[]; attachment?: NtfyAttachment }
  | { event: 'other' };

interface NtfyAttachment {
  name?: string;
  type?: string;
  url: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** One line of the stream; undefined when it is not JSON at all. */
export function parseEvent(line: string): NtfyEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object') return undefined;
  const e = value as Record<string, unknown>;
  const time = typeof e.time === 'number' ? e.time : 0;
  if (e.event === 'open' || e.event === 'keepalive') return { event: e.event, time };
  const id = str(e.id);
  const topic = str(e.topic);
  if (e.event !== 'message' || !id || !topic) return { event: 'other' };
  const a = e.attachment as Record<string, unknown> | undefined;
  const url = a && str(a.url);
  return {
    event: 'message',
    id,
    time,
    topic,
    message: str(e.message) ?? '',
    ...(str(e.title) ? { title: str(e.title) } : {}),
    ...(Array.isArray(e.tags) ? { tags: e.tags.filter((t): t is string => typeof t === 'string') } : {}),
    ...(url ? { attachment: { url, ...(str(a.name) ? { name: str(a.name) } : {}), ...(str(a.type) ? { type: str(a.type) } : {}) } } : {}),
  };
}

/** The inbound message, or undefined for the bot's own reply and an empty message. */
export function toInbound(e: Extract<NtfyEvent, { event: 'message' }>): InboundMessage | undefined {
  if (e.tags?.includes(REPLY_TAG)) return undefined;
  const text = e.title ? `${e.title}\n\n${e.message}` : e.message;
  if (!text.trim() && !e.attachment) return undefined;
  return {
    platformId: e.id,
    chatId: e.topic,
    senderId: e.topic,
    text,
    isGroup: false,
    sentAt: new Date(e.time * 1000).toISOString(),
    ...(e.attachment
      ? {
          media: [
            { mediaType: e.attachment.type ?? 'application/octet-stream', url: e.attachment.url, ...(e.attachment.name ? { name: e.attachment.name } : {}) },
          ],
        }
      : {}),
  };
}
