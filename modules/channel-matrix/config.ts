/** The Matrix adapter's own configure fields (the access token is the channels module's common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

export const matrixFields = {
  type: 'object',
  properties: {
    homeserver_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description:
        "the homeserver's client-server API root without a trailing slash (https://matrix.example.org); a loopback homeserver is reachable because it is configured here",
    },
    user_id: { type: 'string', pattern: '^@[^:]+:.+$', description: "the bot account's full user id (@talon:example.org); the token must belong to it" },
  },
  required: ['homeserver_url', 'user_id'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
