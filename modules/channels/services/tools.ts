/**
 * The agents' `channel_send` tool (the reference's name and argument spelling: channel, recipient, message,
 * thread_id): a message to a chat of a running channel, through the outbound journal like every other send. Which
 * agents have it is the agent's tool list, as for any tool (the `messaging` profile lists it).
 */
import { agentHooks, type ToolDefinition, type ToolOutput } from '@talon/agents';
import type { Channels } from '@talon/channels';
import type { ChannelsContext } from './channels.ts';

const fail = (content: string): ToolOutput => ({ content, isError: true });

/** The argument when it is a non-empty string (the schema, checked before the tool runs, made it a string if given). */
const given = (input: Record<string, unknown>, key: string): string | undefined =>
  typeof input[key] === 'string' && input[key].trim() ? input[key] : undefined;

export function channelSendTool(channels: Channels): ToolDefinition {
  return {
    name: 'channel_send',
    source: 'channels',
    requiresAgent: true,
    description:
      "Send a message to a chat on a messaging channel (telegram, slack, discord, email, irc, webhook…). Without 'recipient' it goes to the channel's default conversation. Returns the platform's message ids.",
    inputSchema: {
      type: 'object',
      properties: {
        channel: { type: 'string', description: "the channel's name, e.g. 'telegram'" },
        recipient: { type: 'string', description: "the platform's chat id; absent: the channel's default_conversation" },
        message: { type: 'string', description: 'the text to send' },
        thread_id: { type: 'string', description: 'a thread inside the chat, where the platform has threads' },
      },
      required: ['channel', 'message'],
    },
    async execute(input) {
      const channel = given(input, 'channel');
      const message = given(input, 'message');
      if (!channel || !message) return fail("channel_send requires non-empty 'channel' and 'message' strings");
      try {
        const { messageIds } = await channels.send({
          channel,
          chatId: given(input, 'recipient'),
          threadId: given(input, 'thread_id'),
          text: message,
        });
        return { content: JSON.stringify({ status: 'sent', channel, message_ids: messageIds }), isError: false };
      } catch (err) {
        return fail(`channel_send failed: ${(err as Error).message}`);
      }
    },
  };
}

export function tapChannelTools(ctx: ChannelsContext, channels: Channels): void {
  const tool = channelSendTool(channels);
  ctx.hooks.tap(agentHooks).tools.tap('channels', (list) => [...list, tool]);
}
