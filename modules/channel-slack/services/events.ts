/**
 * An Events API event (from a Socket Mode envelope or an HTTP request) → the channels module's InboundMessage, or undefined for events that are not a
 * person's message to read (edits, deletions, joins, the bot's own and other bots' posts). Pure: the text stays the
 * untrusted text the sender wrote; files are named here and downloaded by files.ts.
 */
import type { InboundMessage } from '@talon/channels';
import type { SlackFile } from './files.ts';

export interface SlackMessageEvent {
  type?: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  channel?: string;
  channel_type?: string;
  team?: string;
  files?: SlackFile[];
}

/** Subtypes that are still a person writing: a file with a comment, a thread reply also sent to the channel. */
const PERSON_SUBTYPES = new Set(['file_share', 'thread_broadcast']);

export function toInbound(event: SlackMessageEvent, bot: { userId: string; teamId?: string }): InboundMessage | undefined {
  if (event.type !== 'message' && event.type !== 'app_mention') return undefined;
  if (event.subtype && !PERSON_SUBTYPES.has(event.subtype)) return undefined;
  if (event.bot_id || !event.user || event.user === bot.userId) return undefined;
  if (!event.channel || !event.ts) return undefined;
  const raw = event.text ?? '';
  const mentionToken = new RegExp(`<@${escapeRegExp(bot.userId)}(\\|[^>]*)?>`, 'g');
  const unmentioned = raw.replace(mentionToken, ' ');
  const mentioned = event.type === 'app_mention' || unmentioned !== raw;
  const text = decodeEntities(unmentioned)
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
  const media = (event.files ?? []).map((f) => ({ mediaType: f.mimetype ?? 'application/octet-stream', ...(f.name ? { name: f.name } : {}) }));
  if (!text && media.length === 0) return undefined;
  // app_mention events carry no channel_type; Slack's DM channel ids start with D.
  const isGroup = event.channel_type ? event.channel_type !== 'im' : !event.channel.startsWith('D');
  return {
    // A message is (channel, ts) in Slack: the same id for an envelope Slack sends again after a missing ack, and for
    // the `message` and `app_mention` events one mention produces (their event_ids differ), so either is stored once.
    platformId: `${event.channel}:${event.ts}`,
    chatId: event.channel,
    ...(event.thread_ts ? { threadId: event.thread_ts } : {}),
    senderId: event.user,
    text,
    isGroup,
    mentioned,
    ...((event.team ?? bot.teamId) ? { accountId: event.team ?? bot.teamId } : {}),
    ...(media.length ? { media } : {}),
    sentAt: new Date(Number(event.ts) * 1000).toISOString(),
  };
}

/** Slack escapes exactly these three in message text (its formatting docs); everything else arrives as written. */
function decodeEntities(text: string): string {
  return text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
