import type { FromSchema } from '@talon/module-sdk';

export const agentsWsConfigSchema = {
  type: 'object',
  properties: {
    agents_updated_interval_ms: { type: 'integer', minimum: 20, default: 5000, description: 'how often each socket receives agents_updated (spec: 5 seconds)' },
  },
  additionalProperties: false,
} as const;

export type AgentsWsConfig = FromSchema<typeof agentsWsConfigSchema, { keepDefaultedPropertiesOptional: false }>;
