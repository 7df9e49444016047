/**
 * A Mattermost post → the channels module's InboundMessage: the post id as the platform id, root_id as the thread,
 * channel type D (a direct message) or O/P/G (public, private and group-message channels: several people, so
 * group_policy applies), mention gating by the event's `mentions` (user ids the server resolved) or, for posts read
 * back by the catch-up (which carry none), `@username` in the text; files downloaded through the context's fetch.
 * The bot's own posts, system posts (joins, header changes) and edits of posts already seen are not messages.
 */
import type { InboundMedia, InboundMessage } from '@talon/channels';
import type { MattermostRest } from './rest.ts';

/** Files over this are named for the agent, not fetched (the content goes into the journal row and to the model). */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;

export interface MattermostPost {
  id: string;
  channel_id: string;
  user_id: string;
  root_id?: string;
  message?: string;
  type?: string;
  create_at: number;
  delete_at?: number;
  file_ids?: string[];
  metadata?: { files?: Array<{ id: string; name?: string; mime_type?: string; size?: number }> };
  props?: Record<string, unknown>;
}

export interface Me {
  id: string;
  username: string;
}

export interface PostContext {
  channelType: string;
  /** The user ids the server says the post mentions (the posted event's `mentions`); absent for read-back posts. */
  mentions?: string[];
  senderName?: string;
}

export async function toInbound(
  post: MattermostPost,
  where: PostContext,
  me: Me,
  rest: MattermostRest,
  signal: AbortSignal,
): Promise<InboundMessage | undefined> {
  if (post.user_id === me.id || post.type?.startsWith('system_') || (post.delete_at ?? 0) > 0) return undefined;
  const text = post.message ?? '';
  const media = await download(post, rest, signal);
  if (!text.trim() && !media.length) return undefined;
  const isGroup = where.channelType !== 'D';
  const name = where.senderName?.replace(/^@/, '') || (typeof post.props?.override_username === 'string' ? post.props.override_username : undefined);
  return {
    platformId: post.id,
    chatId: post.channel_id,
    ...(post.root_id ? { threadId: post.root_id } : {}),
    senderId: post.user_id,
    ...(name ? { senderName: name } : {}),
    text,
    isGroup,
    ...(isGroup ? { mentioned: mentioned(text, where.mentions, me) } : {}),
    ...(media.length ? { media } : {}),
    sentAt: new Date(post.create_at).toISOString(),
  };
}

export function mentioned(text: string, mentions: string[] | undefined, me: Me): boolean {
  if (mentions?.includes(me.id)) return true;
  // Mattermost usernames: letters, digits and . _ -; a mention ends where those stop (a trailing dot ends a sentence).
  const at = new RegExp(`(^|[^\\w.@-])@${me.username.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}(?![\\w-]|\\.[\\w-])`, 'i');
  return at.test(text);
}

async function download(post: MattermostPost, rest: MattermostRest, signal: AbortSignal): Promise<InboundMedia[]> {
  const infos = post.metadata?.files ?? (post.file_ids ?? []).map((id) => ({ id }) as { id: string; name?: string; mime_type?: string; size?: number });
  const out: InboundMedia[] = [];
  for (const info of infos) {
    const named: InboundMedia = { mediaType: info.mime_type || 'application/octet-stream', ...(info.name ? { name: info.name } : {}) };
    const data = (info.size ?? 0) > MAX_MEDIA_BYTES ? undefined : await rest.download(info.id, MAX_MEDIA_BYTES, signal);
    out.push(data ? { ...named, data: data.toString('base64') } : named);
  }
  return out;
}
