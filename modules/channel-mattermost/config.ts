/** The Mattermost adapter's own configure fields (the bot's personal access token is the common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

export const mattermostFields = {
  type: 'object',
  properties: {
    server_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description:
        "the Mattermost server's URL without a trailing slash (https://chat.example.com); the WebSocket goes to the same host, and a loopback server is reachable because it is configured here",
    },
  },
  required: ['server_url'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
