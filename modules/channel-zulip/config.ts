/** The Zulip adapter's own configure fields (the bot's API key is the channels module's common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

export const zulipFields = {
  type: 'object',
  properties: {
    server_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description:
        "the Zulip organization's URL without a trailing slash (https://chat.example.org); a loopback server is reachable because it is configured here",
    },
    bot_email: {
      type: 'string',
      pattern: '^[^@\\s]+@[^@\\s]+$',
      description: "the bot's email (Settings → Personal → Bots); the API key in token belongs to it",
    },
    streams: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 60 },
      maxItems: 100,
      description: 'the streams (channels) the bot reads; empty: every stream the bot is subscribed to. Direct messages are always read',
    },
  },
  required: ['server_url', 'bot_email'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
