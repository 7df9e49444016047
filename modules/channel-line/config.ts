/** The LINE adapter's own configure fields (the channel access token is the channels module's common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

export const DEFAULT_API_URL = 'https://api.line.me';
export const DEFAULT_DATA_URL = 'https://api-data.line.me';
/** The route LINE POSTs webhooks to; the console's "Webhook URL" is its public address. */
export const WEBHOOK_ROUTE = '/api/channels/line/webhook';

export const lineFields = {
  type: 'object',
  properties: {
    channel_secret: {
      type: 'string',
      pattern: '^\\S{8,128}$',
      description: 'the channel secret (Basic settings), which signs each webhook (X-Line-Signature); a secret',
    },
    api_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description: `Messaging API root without a trailing slash (default ${DEFAULT_API_URL})`,
    },
    data_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description: `root of the API serving message content (default ${DEFAULT_DATA_URL})`,
    },
  },
  required: ['channel_secret'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
