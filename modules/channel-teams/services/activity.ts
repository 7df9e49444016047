/**
 * An activity as the Bot Framework POSTs it (the fields the adapter reads; the rest of the schema is the
 * Bot Framework's and passes), and its mapping to the channels module's InboundMessage. Teams' conversation types:
 * `personal` (a DM), `groupChat`, `channel`. A channel message's conversation id ends in `;messageid=<root>`: the
 * reply chain is the thread. A mention of the bot is an entity of type `mention` whose `mentioned.id` is the bot's
 * (the activity's recipient, 28:<app id>); its `<at>name</at>` text is taken out of what the agent reads.
 */
import type { FromSchema } from '@talon/module-sdk';
import type { InboundMessage } from '@talon/channels';

const id = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const party = { type: 'object', required: ['id'], properties: { id, name: { type: 'string', maxLength: 1024 } } } as const;

export const activitySchema = {
  type: 'object',
  required: ['type', 'serviceUrl', 'channelId', 'conversation'],
  properties: {
    type: { type: 'string', minLength: 1, maxLength: 64 },
    id,
    serviceUrl: { type: 'string', minLength: 1, maxLength: 2048 },
    channelId: { type: 'string', minLength: 1, maxLength: 64 },
    timestamp: { type: 'string', maxLength: 64 },
    text: { type: 'string', maxLength: 100_000 },
    from: party,
    recipient: party,
    conversation: {
      type: 'object',
      required: ['id'],
      properties: { id, conversationType: { type: 'string', maxLength: 64 }, isGroup: { type: 'boolean' }, tenantId: { type: 'string', maxLength: 256 } },
    },
    entities: {
      type: 'array',
      maxItems: 100,
      items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, text: { type: 'string', maxLength: 1024 }, mentioned: party } },
    },
  },
} as const;

export type Activity = FromSchema<typeof activitySchema>;

/** How a thread rides on a channel conversation id. */
const THREAD_MARK = ';messageid=';

export function splitConversation(conversationId: string): { chatId: string; threadId?: string } {
  const at = conversationId.indexOf(THREAD_MARK);
  if (at < 0) return { chatId: conversationId };
  return { chatId: conversationId.slice(0, at), threadId: conversationId.slice(at + THREAD_MARK.length) };
}

export const joinConversation = (chatId: string, threadId?: string) => (threadId ? `${chatId}${THREAD_MARK}${threadId}` : chatId);

/** Activity ids are unique within a conversation only: the platform id carries both, and replyTo reads the id back. */
export const platformIdOf = (conversationId: string, activityId: string) => `${conversationId}|${activityId}`;
export const activityIdOf = (platformId: string) => platformId.slice(platformId.lastIndexOf('|') + 1);

/** The message the agent hears, or undefined for activities that are not a user's message (conversationUpdate, ...). */
export function toInbound(activity: Activity, appId: string): InboundMessage | undefined {
  if (activity.type !== 'message' || !activity.id || !activity.from) return undefined;
  const { chatId, threadId } = splitConversation(activity.conversation.id);
  const bot = new Set([activity.recipient?.id, appId, `28:${appId}`].filter(Boolean));
  const mentions = (activity.entities ?? []).filter((e) => e.type === 'mention' && e.mentioned && bot.has(e.mentioned.id));
  let text = activity.text ?? '';
  for (const m of mentions) if (m.text) text = text.split(m.text).join('');
  const type = activity.conversation.conversationType;
  return {
    platformId: platformIdOf(chatId, activity.id),
    chatId,
    ...(threadId ? { threadId } : {}),
    senderId: activity.from.id,
    ...(activity.from.name ? { senderName: activity.from.name } : {}),
    text: text.trim(),
    isGroup: type ? type !== 'personal' : activity.conversation.isGroup === true,
    mentioned: mentions.length > 0,
    ...(activity.conversation.tenantId ? { accountId: activity.conversation.tenantId } : {}),
    ...(activity.timestamp ? { sentAt: activity.timestamp } : {}),
  };
}
