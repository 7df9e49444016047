/**
 * A Zulip message as the channels module's InboundMessage. A direct message's chat is `dm:<ids>` (the other
 * participants' user ids, sorted: a group DM of several people is a group); a stream message's chat is
 * `stream:<stream id>` with its topic as the thread. The bot is mentioned when the server flags the message
 * `mentioned` (an @**Bot** mention, a user-group mention it is in) or, where no flags came, the text names it.
 * Files linked from the message (/user_uploads/…) are downloaded with the bot's credentials, up to 10 MB each.
 */
import type { AdapterContext, InboundMedia, InboundMessage } from '@talon/channels';
import type { ZulipClient } from './client.ts';

const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
const MAX_FILES = 5;

export interface ZulipMessage {
  id: number;
  sender_id: number;
  sender_email?: string;
  sender_full_name?: string;
  type: 'stream' | 'private';
  display_recipient: string | Array<{ id: number; email?: string; full_name?: string }>;
  stream_id?: number;
  subject?: string;
  content: string;
  timestamp?: number;
  flags?: string[];
}

export interface Me {
  id: number;
  fullName: string;
}

export interface InboundDeps {
  ctx: AdapterContext;
  client: ZulipClient;
  me: Me;
  /** Stream names read (lowercase); undefined: every subscribed stream. */
  streams?: ReadonlySet<string>;
}

/** The message as the journal takes it, or undefined when it is not for the bot (its own, an unread stream). */
export async function toInbound(msg: ZulipMessage, flags: readonly string[] | undefined, deps: InboundDeps): Promise<InboundMessage | undefined> {
  if (msg.sender_id === deps.me.id) return undefined;
  let chatId: string;
  let threadId: string | undefined;
  let isGroup: boolean;
  if (msg.type === 'stream') {
    const stream = typeof msg.display_recipient === 'string' ? msg.display_recipient : '';
    if (deps.streams && !deps.streams.has(stream.toLowerCase())) return undefined;
    chatId = `stream:${msg.stream_id}`;
    threadId = msg.subject ?? '';
    isGroup = true;
  } else {
    const others = (Array.isArray(msg.display_recipient) ? msg.display_recipient : []).map((u) => u.id).filter((id) => id !== deps.me.id);
    chatId = `dm:${[...new Set(others)].sort((a, b) => a - b).join(',')}`;
    isGroup = others.length > 1;
  }
  const media = await downloads(msg.content, deps);
  return {
    platformId: String(msg.id),
    chatId,
    ...(threadId !== undefined ? { threadId } : {}),
    senderId: String(msg.sender_id),
    ...(msg.sender_full_name ? { senderName: msg.sender_full_name } : {}),
    text: msg.content,
    isGroup,
    ...(isGroup ? { mentioned: mentioned(msg.content, flags ?? msg.flags, deps.me) } : {}),
    ...(media.length ? { media } : {}),
    ...(msg.timestamp ? { sentAt: new Date(msg.timestamp * 1000).toISOString() } : {}),
  };
}

/** The server's `mentioned` flag; without flags (an old server), an @**Full Name** mention in the text. */
export function mentioned(content: string, flags: readonly string[] | undefined, me: Me): boolean {
  if (flags) return flags.includes('mentioned');
  return content.toLowerCase().includes(`@**${me.fullName.toLowerCase()}`);
}

/** Files the message links from the server's upload area: `[name](/user_uploads/…)`. */
export function uploadLinks(content: string): Array<{ name: string; path: string }> {
  const links: Array<{ name: string; path: string }> = [];
  for (const m of content.matchAll(/\[([^\]\n]{0,200})\]\((\/user_uploads\/[^)\s]{1,400})\)/g)) {
    if (links.length >= MAX_FILES) break;
    links.push({ name: m[1]!, path: m[2]! });
  }
  return links;
}

async function downloads(content: string, deps: InboundDeps): Promise<InboundMedia[]> {
  const media: InboundMedia[] = [];
  for (const link of uploadLinks(content)) {
    const name = decodeURIComponent(link.path.split('/').pop() ?? '') || link.name;
    const got = await deps.client.download(link.path, MAX_MEDIA_BYTES, deps.ctx.signal);
    media.push({ mediaType: got?.mediaType ?? 'application/octet-stream', name, ...(got ? { data: got.data.toString('base64') } : {}) });
  }
  return media;
}
