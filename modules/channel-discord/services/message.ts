/**
 * A Gateway MESSAGE_CREATE → the journal's InboundMessage. A thread is a channel of its own on Discord: its messages
 * carry the thread's id as channel_id, so the reply (sent to that channel) lands in the thread and the thread has its
 * own session.
 */
import { MessageType, type GatewayMessageCreateDispatchData } from '@discordjs/core';
import type { InboundMessage } from '@talon/channels';

export interface Bot {
  id: string;
  /** Whether the bot sent the message with this id (a reply to it counts as a mention). */
  sent(messageId: string): boolean;
}

/** undefined: not for the agent (the bot's own, another bot's, a webhook's, a system message, or nothing readable). */
export function toInbound(m: GatewayMessageCreateDispatchData, bot: Bot): InboundMessage | undefined {
  // Other bots and webhooks are not people: answering them can loop two bots for ever.
  if (m.author.id === bot.id || m.author.bot || m.webhook_id) return undefined;
  if (m.type !== MessageType.Default && m.type !== MessageType.Reply) return undefined;
  const isGroup = m.guild_id !== undefined;
  const mention = new RegExp(`<@!?${bot.id}>`, 'g');
  const named = m.content.includes(`<@${bot.id}>`) || m.content.includes(`<@!${bot.id}>`);
  const repliedTo = m.referenced_message?.author.id === bot.id || (m.message_reference?.message_id !== undefined && bot.sent(m.message_reference.message_id));
  const mentioned = m.mentions.some((u) => u.id === bot.id) || named || repliedTo;
  const text = m.content.replace(mention, '').trim();
  const media = m.attachments.map((a) => ({ mediaType: a.content_type ?? 'application/octet-stream', name: a.filename, url: a.url }));
  if (!text && !media.length) return undefined;
  return {
    platformId: m.id,
    chatId: m.channel_id,
    senderId: m.author.id,
    senderName: m.author.global_name ?? m.author.username,
    text,
    isGroup,
    ...(isGroup ? { mentioned, guildId: m.guild_id, ...(m.member?.roles.length ? { roles: m.member.roles } : {}) } : {}),
    ...(media.length ? { media } : {}),
    sentAt: m.timestamp,
  };
}
