/** The Signal adapter's own configure fields (`token`, optional, is the bearer token of a proxy in front of the daemon). */
import type { ChannelFieldSchema } from '@talon/channels';

export const signalFields = {
  type: 'object',
  properties: {
    api_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description:
        "the signal-cli daemon's HTTP address (signal-cli daemon --http=127.0.0.1:8080 → http://127.0.0.1:8080), no trailing slash; a loopback daemon is reachable because it is configured here",
    },
    number: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$', description: "the bot's Signal account, as registered or linked in signal-cli (+15551234567)" },
  },
  required: ['api_url', 'number'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;
