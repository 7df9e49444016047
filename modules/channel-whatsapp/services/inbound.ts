/**
 * The webhook payload (`object: whatsapp_business_account`, entry[].changes[].value) read into the channels module's
 * InboundMessages. Only `messages` changes for this channel's phone_number_id are heard; statuses (sent, delivered,
 * read) and other numbers' changes are ignored. WhatsApp Cloud API messages are all one-to-one (a business number is
 * not in groups), so every message is a direct one whose chat is the sender's wa_id. The payload is untrusted: each
 * field is checked for its type, and what does not fit is skipped, never guessed.
 */
import type { InboundMessage } from '@talon/channels';
import type { MediaRef } from './media.ts';

/** A message of the payload as read: the InboundMessage without its files, and the file to fetch, if any. */
export interface ReadMessage {
  message: Omit<InboundMessage, 'media'>;
  media?: MediaRef;
}

export type Obj = Record<string, unknown>;
export const obj = (value: unknown): Obj | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : undefined);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const str = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);

/** Seconds since the epoch as ISO, when a plausible time: past JavaScript's last date (8.64e15 ms) toISOString throws. */
export const sentAtOf = (seconds: number): string | undefined =>
  Number.isFinite(seconds) && seconds > 0 && seconds < 8.64e12 ? new Date(seconds * 1000).toISOString() : undefined;

const MEDIA_TYPES = ['image', 'document', 'audio', 'video', 'sticker'] as const;

/** Why the body is not a WhatsApp webhook payload, or its messages for `phoneNumberId`. */
export function readPayload(raw: string, phoneNumberId: string): { error: string } | { messages: ReadMessage[] } {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { error: 'the body is not JSON' };
  }
  const root = obj(body);
  if (!root || root.object !== 'whatsapp_business_account' || !Array.isArray(root.entry))
    return { error: "not a WhatsApp webhook: object must be 'whatsapp_business_account' with an entry array" };
  const messages: ReadMessage[] = [];
  for (const entry of list(root.entry))
    for (const change of list(obj(entry)?.changes)) {
      const value = obj(obj(change)?.value);
      if (obj(change)?.field !== 'messages' || !value || obj(value.metadata)?.phone_number_id !== phoneNumberId) continue;
      const names = new Map<string, string>();
      for (const contact of list(value.contacts)) {
        const id = str(obj(contact)?.wa_id);
        const name = str(obj(obj(contact)?.profile)?.name);
        if (id && name) names.set(id, name);
      }
      for (const item of list(value.messages)) {
        const read = readMessage(obj(item), names);
        if (read) messages.push(read);
      }
    }
  return { messages };
}

function readMessage(item: Obj | undefined, names: Map<string, string>): ReadMessage | undefined {
  const from = str(item?.from);
  const id = str(item?.id);
  const type = str(item?.type);
  if (!item || !from || !id || !type) return undefined;
  const sentAt = sentAtOf(Number(item.timestamp));
  const name = names.get(from);
  const base = {
    platformId: id,
    chatId: from,
    senderId: from,
    ...(name ? { senderName: name } : {}),
    isGroup: false,
    // An impossible stamp is dropped, not answered 500 (and redelivered) for days.
    ...(sentAt ? { sentAt } : {}),
  };
  if (type === 'text') {
    const text = str(obj(item.text)?.body);
    return text ? { message: { ...base, text } } : undefined;
  }
  if (type === 'button') {
    const text = str(obj(item.button)?.text);
    return text ? { message: { ...base, text } } : undefined;
  }
  if (type === 'interactive') {
    const reply = obj(obj(item.interactive)?.button_reply) ?? obj(obj(item.interactive)?.list_reply);
    const text = str(reply?.title);
    return text ? { message: { ...base, text } } : undefined;
  }
  if ((MEDIA_TYPES as readonly string[]).includes(type)) {
    const part = obj(item[type]);
    const mediaId = str(part?.id);
    const mimeType = str(part?.mime_type);
    if (!mediaId || !mimeType) return undefined;
    const filename = str(part?.filename);
    // A voice note is an audio message with `voice: true` (Ogg/Opus).
    const media: MediaRef = { id: mediaId, mimeType, ...(filename ? { name: filename } : {}) };
    return { message: { ...base, text: str(part?.caption) ?? '' }, media };
  }
  // Reactions, locations, contacts, orders, system and unsupported messages are not something the agent answers.
  return undefined;
}
