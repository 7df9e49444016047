/**
 * The inbound webhook body, checked field by field into the channels module's InboundMessage. The body is parsed here,
 * not by the route's JSON Schema, because the signature covers the raw bytes the sender signed.
 */
import type { InboundMessage } from '@talon/channels';
import { parseMedia } from './media.ts';

const MAX_ID = 500;
const MAX_TEXT = 100_000;

export interface InboundBody {
  id: string;
  chat_id: string;
  sender_id: string;
  sender_name?: string;
  text: string;
  thread_id?: string;
  is_group?: boolean;
  mentioned?: boolean;
  sent_at?: string;
  media?: Array<{ name: string; media_type: string; data?: string; url?: string }>;
}

type Checked = { message: InboundMessage } | { error: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The message of a raw body, or the first field that is wrong. */
export function parseInbound(raw: string): Checked {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { error: 'body: not JSON' };
  }
  if (!isRecord(body)) return { error: 'body: expected a JSON object' };
  const files = parseMedia(body.media);
  const text = (field: string, max: number, required: boolean, min = 1): string | undefined | Error => {
    const v = body[field];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v.length < min || v.length > max) return new Error(`${field}: expected a string of ${min} to ${max} characters`);
    return v;
  };
  const flag = (field: string): boolean | undefined | Error => {
    const v = body[field];
    return v === undefined || typeof v === 'boolean' ? v : new Error(`${field}: expected a boolean`);
  };
  const fields = {
    id: text('id', MAX_ID, true),
    chat_id: text('chat_id', MAX_ID, true),
    sender_id: text('sender_id', MAX_ID, true),
    sender_name: text('sender_name', MAX_ID, false),
    // A file may come without a caption.
    text: text('text', MAX_TEXT, true, 'media' in files && files.media.length ? 0 : 1),
    thread_id: text('thread_id', MAX_ID, false),
    is_group: flag('is_group'),
    mentioned: flag('mentioned'),
    sent_at: text('sent_at', 64, false),
  };
  for (const v of Object.values(fields)) if (v instanceof Error) return { error: v.message };
  if ('error' in files) return files;
  const f = fields as { [K in keyof typeof fields]: Exclude<(typeof fields)[K], Error> };
  if (f.sent_at !== undefined && Number.isNaN(Date.parse(f.sent_at))) return { error: 'sent_at: expected an ISO date' };
  return {
    message: {
      platformId: f.id!,
      chatId: f.chat_id!,
      senderId: f.sender_id!,
      text: f.text!,
      isGroup: f.is_group ?? false,
      ...(f.sender_name !== undefined ? { senderName: f.sender_name } : {}),
      ...(f.thread_id !== undefined ? { threadId: f.thread_id } : {}),
      ...(f.mentioned !== undefined ? { mentioned: f.mentioned } : {}),
      ...(f.sent_at !== undefined ? { sentAt: f.sent_at } : {}),
      ...(files.media.length ? { media: files.media } : {}),
    },
  };
}
