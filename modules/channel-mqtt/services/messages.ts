/**
 * The MQTT message forms. In: a JSON object {text, id?, chat?, sender?, sender_name?, thread?, group?, mentioned?}
 * published to topic_in or below it, or a plain UTF-8 text; the chat is then the topic levels below topic_in
 * (`talon/in/alice` → `alice`) and the sender the chat. Out: the JSON object {id, chat, thread?, reply_to?, text}
 * published to topic_out/<chat>. Payloads are untrusted: only these fields are read, as strings, bounded.
 */
import { randomUUID } from 'node:crypto';
import type { InboundMessage, OutboundChunk } from '@talon/channels';

/** The chat when a plain text comes in on topic_in itself (nothing below it names one). */
export const DEFAULT_CHAT = 'default';
/** A payload larger than this is not a chat message (a chat client sends far less): acknowledged and dropped. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;
const MAX_FIELD = 200;

/** A chat id is a topic level path under topic_out: no wildcard, NUL, empty level or leading/trailing slash. */
const validChat = (chat: string) => chat.length > 0 && chat.length <= MAX_FIELD && !/[+#\x00]/.test(chat) && !chat.split('/').includes('');

const field = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length > 0 && v.length <= MAX_FIELD ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;

function parseJson(payload: string): Record<string, unknown> | undefined {
  if (!payload.trimStart().startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(payload);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The inbound message, or why the payload is not one (it is acknowledged and dropped: a redelivery would not help). */
export function toInbound(topic: string, payload: Buffer, topicIn: string): InboundMessage | { refused: string } {
  if (payload.length > MAX_PAYLOAD_BYTES) return { refused: `payload of ${payload.length} bytes` };
  const below = topic === topicIn ? '' : topic.startsWith(`${topicIn}/`) ? topic.slice(topicIn.length + 1) : undefined;
  if (below === undefined) return { refused: 'not under topic_in' };
  const raw = payload.toString('utf8');
  const json = parseJson(raw);
  const text = json ? (typeof json.text === 'string' ? json.text : '') : raw;
  if (!text.trim()) return { refused: 'no text' };
  const chat = (json && field(json.chat)) ?? (below || DEFAULT_CHAT);
  if (!validChat(chat)) return { refused: 'a chat id that is no topic path' };
  const sender = (json && field(json.sender)) ?? chat;
  const thread = json && field(json.thread);
  const senderName = json && field(json.sender_name);
  const isGroup = json?.group === true;
  return {
    // Without an id the message is delivered at least once: a redelivery after a lost PUBACK is a new message.
    platformId: (json && field(json.id)) ?? randomUUID(),
    chatId: chat,
    senderId: sender,
    ...(senderName ? { senderName } : {}),
    ...(thread ? { threadId: thread } : {}),
    text,
    isGroup,
    ...(isGroup ? { mentioned: json?.mentioned === true } : {}),
  };
}

/** The reply's topic and payload. */
export function toPublish(chunk: OutboundChunk, topicOut: string): { topic: string; payload: string } {
  return {
    topic: `${topicOut}/${chunk.chatId}`,
    payload: JSON.stringify({
      id: chunk.nonce,
      chat: chunk.chatId,
      ...(chunk.threadId ? { thread: chunk.threadId } : {}),
      ...(chunk.replyTo ? { reply_to: chunk.replyTo } : {}),
      text: chunk.text,
    }),
  };
}
