/**
 * A room message event → the channels module's InboundMessage: the event id as the platform id (unique across the
 * federation), m.thread relations as threads, rooms of two members as direct messages, mention gating from
 * m.mentions (or, for clients that send none, the bot's user id or display name in the body) and replies to the
 * bot's events, files downloaded through the context's fetch. Edits and notices (other bots) are not messages.
 */
import type { AdapterContext, InboundMedia, InboundMessage } from '@talon/channels';
import type { Json, MatrixClient } from './client.ts';
import type { Rooms } from './rooms.ts';

/** Files over this are named for the agent, not fetched (the content goes into the journal row and to the model). */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;

const FILE_TYPES = new Set(['m.image', 'm.file', 'm.audio', 'm.video']);

export interface MatrixEvent {
  type: string;
  event_id: string;
  sender: string;
  origin_server_ts?: number;
  state_key?: string;
  content: Json;
}

export interface InboundDeps {
  ctx: AdapterContext;
  client: MatrixClient;
  rooms: Rooms;
  /** The bot's display name, when it has one. */
  displayName(): string | undefined;
}

const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** undefined: not a message the agent hears. */
export async function toInbound(roomId: string, ev: MatrixEvent, deps: InboundDeps): Promise<InboundMessage | undefined> {
  const { content } = ev;
  const msgtype = str(content.msgtype);
  const relation = obj(content['m.relates_to']);
  if (ev.type !== 'm.room.message' || ev.sender === deps.rooms.me || !msgtype || msgtype === 'm.notice') return undefined;
  if (relation?.rel_type === 'm.replace') return undefined;
  const isFile = FILE_TYPES.has(msgtype);
  // A file's body is its caption when `filename` names the file (Matrix 1.10), else the file name itself.
  const rawText = isFile ? (str(content.filename) && content.body !== content.filename ? (str(content.body) ?? '') : '') : (str(content.body) ?? '');
  const text = stripReplyFallback(rawText);
  const media = isFile ? await download(content, msgtype, deps) : [];
  if (!text.trim() && !media.length) return undefined;
  const isGroup = !(await deps.rooms.isDirect(roomId));
  const threadId = relation?.rel_type === 'm.thread' ? str(relation.event_id) : undefined;
  return {
    platformId: ev.event_id,
    chatId: roomId,
    ...(threadId ? { threadId } : {}),
    senderId: ev.sender,
    senderName: localpart(ev.sender),
    text: msgtype === 'm.emote' ? `* ${localpart(ev.sender)} ${text}` : text,
    isGroup,
    ...(isGroup ? { mentioned: await mentions(roomId, ev, text, deps) } : {}),
    ...(media.length ? { media } : {}),
    ...(ev.origin_server_ts ? { sentAt: new Date(ev.origin_server_ts).toISOString() } : {}),
  };
}

/**
 * m.mentions naming the bot; without m.mentions (older clients), the bot's user id or display name in the text — the
 * spec forbids that fallback when m.mentions is present, which keeps a quoted name from waking the bot; or a reply to
 * one of the bot's events (a thread's fallback reply is not one).
 */
export async function mentions(roomId: string, ev: MatrixEvent, text: string, deps: InboundDeps): Promise<boolean> {
  const me = deps.rooms.me;
  const intentional = obj(ev.content['m.mentions']);
  if (intentional) {
    if (Array.isArray(intentional.user_ids) && intentional.user_ids.includes(me)) return true;
  } else {
    const lower = text.toLowerCase();
    const name = deps.displayName()?.toLowerCase();
    if (lower.includes(me.toLowerCase()) || (name && new RegExp(`(^|[^\\p{L}\\p{N}])${escape(name)}($|[^\\p{L}\\p{N}])`, 'u').test(lower))) return true;
  }
  const relation = obj(ev.content['m.relates_to']);
  const replyTo = str(obj(relation?.['m.in_reply_to'])?.event_id);
  if (!replyTo || relation?.is_falling_back === true) return false;
  return (await deps.rooms.senderOf(roomId, replyTo)) === me;
}

/** Older clients quote the message replied to as `> ` lines and a blank line before the reply: not the sender's text. */
export function stripReplyFallback(body: string): string {
  if (!body.startsWith('> ')) return body;
  const lines = body.split('\n');
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith('>')) i++;
  if (i < lines.length && lines[i] === '') i++;
  return lines.slice(i).join('\n');
}

async function download(content: Json, msgtype: string, deps: InboundDeps): Promise<InboundMedia[]> {
  const info = obj(content.info) ?? {};
  const mediaType = str(info.mimetype) ?? (msgtype === 'm.image' ? 'image/png' : 'application/octet-stream');
  const name = str(content.filename) ?? str(content.body);
  const named: InboundMedia = { mediaType, ...(name ? { name } : {}) };
  const url = str(content.url);
  // An encrypted file (content.file) cannot be read without the room's keys: named only.
  if (!url || (typeof info.size === 'number' && info.size > MAX_MEDIA_BYTES)) return [named];
  const data = await deps.client.download(url, MAX_MEDIA_BYTES, deps.ctx.signal);
  return data ? [{ ...named, data: data.toString('base64') }] : [named];
}

const localpart = (userId: string) => userId.replace(/^@/, '').split(':')[0]!;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
