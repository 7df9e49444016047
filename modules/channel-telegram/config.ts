/** The Telegram adapter's own configure fields (the bot token is the channels module's common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

export const DEFAULT_API_URL = 'https://api.telegram.org';
/** The route Telegram POSTs updates to in webhook mode; `webhook_url` is its public address. */
export const WEBHOOK_ROUTE = '/api/channels/telegram/webhook';

export const telegramFields = {
  type: 'object',
  properties: {
    api_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description: `Bot API root without a trailing slash (default ${DEFAULT_API_URL}); a local Bot API server's URL is reachable because it is configured here`,
    },
    mode: {
      type: 'string',
      enum: ['polling', 'webhook'],
      description: 'polling (default): getUpdates long polling; webhook: Telegram POSTs each update to webhook_url',
    },
    webhook_url: {
      type: 'string',
      pattern: '^https?://\\S+$',
      description: `webhook mode: the public URL Telegram calls, reaching this service's POST ${WEBHOOK_ROUTE} (Telegram's cloud wants https on port 443, 80, 88 or 8443)`,
    },
    webhook_secret: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,256}$',
      description: 'webhook mode: the secret Telegram sends in X-Telegram-Bot-Api-Secret-Token (a secret; absent: a random one is made at each start)',
    },
  },
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
