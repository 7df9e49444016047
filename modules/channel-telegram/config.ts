/** The Telegram adapter's own configure fields (the bot token is the channels module's common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

export const DEFAULT_API_URL = 'https://api.telegram.org';

export const telegramFields = {
  type: 'object',
  properties: {
    api_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description: `Bot API root without a trailing slash (default ${DEFAULT_API_URL}); a local Bot API server's URL is reachable because it is configured here`,
    },
  },
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
