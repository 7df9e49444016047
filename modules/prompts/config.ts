import type { FromSchema } from '@talon/module-sdk';

export const promptsConfigSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', default: false, description: 'prompt versions and A/B experiments (routes and prompt injection)' },
    max_versions_per_agent: { type: 'integer', minimum: 1, maximum: 10000, default: 50, description: 'versions kept per agent' },
  },
  additionalProperties: false,
} as const;
export type PromptsConfig = FromSchema<typeof promptsConfigSchema, { keepDefaultedPropertiesOptional: false }>;
