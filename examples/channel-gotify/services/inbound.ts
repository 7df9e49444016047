/**
 * A Gotify message as the channels module's InboundMessage. Gotify has applications (scripts, services) posting to a
 * user, no people and no groups: each application is a chat. The applications listed in `direct_apps` talk to the agent
 * directly (dm_policy); every other one is a group (group_policy: with `mention`, only a message starting with
 * `@<bot_name>` reaches the agent, so a feed of alerts is not answered unless addressed). Content is untrusted text.
 */
import type { InboundMessage } from '@talon/channels';
import type { GotifyMessage } from './rest.ts';

export interface Audience {
  directApps: ReadonlySet<string>;
  botName: string;
  /** Application names by id, for the sender's name. */
  names: ReadonlyMap<number, string>;
}

export function toInbound(m: GotifyMessage, audience: Audience): InboundMessage | undefined {
  const chatId = String(m.appid);
  const mention = new RegExp(`^\\s*@${audience.botName}(?![\\w-])[\\s,:]*`, 'i');
  const mentioned = mention.test(m.message);
  const body = m.message.replace(mention, '');
  const text = m.title?.trim() ? `${m.title.trim()}\n\n${body}` : body;
  if (!text.trim()) return undefined;
  const name = audience.names.get(m.appid);
  return {
    platformId: String(m.id),
    chatId,
    senderId: chatId,
    ...(name ? { senderName: name } : {}),
    text,
    isGroup: !audience.directApps.has(chatId),
    mentioned,
    sentAt: m.date,
  };
}
