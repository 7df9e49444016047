/** The Rocket.Chat adapter's own configure fields (the personal access token is the common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

export const rocketchatFields = {
  type: 'object',
  properties: {
    server_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description:
        "the Rocket.Chat server's URL without a trailing slash (https://chat.example.com); the realtime API's WebSocket goes to the same host, and a loopback server is reachable because it is configured here",
    },
    user_id: { type: 'string', pattern: '^[A-Za-z0-9]+$', description: "the bot user's id, shown with its personal access token (X-User-Id)" },
  },
  required: ['server_url', 'user_id'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
