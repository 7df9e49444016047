import type { FromSchema } from '@talon/module-sdk';

export const commsConfigSchema = {
  type: 'object',
  properties: {
    history: { type: 'integer', minimum: 10, maximum: 100000, default: 500, description: 'comms events kept for GET /api/comms/events (in memory)' },
    max_streams: { type: 'integer', minimum: 1, maximum: 10000, default: 64, description: 'open /api/comms/events/stream connections at most (more get 429)' },
    keep_alive_secs: { type: 'integer', minimum: 1, maximum: 300, default: 15, description: 'keep-alive comment interval of the stream' },
  },
  additionalProperties: false,
} as const;

export type CommsConfig = FromSchema<typeof commsConfigSchema, { keepDefaultedPropertiesOptional: false }>;
