import type { FromSchema } from '@talon/module-sdk';

export const autoDreamConfigSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', default: false, description: "consolidate agents' memory on a schedule (per-agent switches override)" },
    min_hours: { type: 'number', minimum: 1, default: 24, description: "hours between two consolidations of an agent (its scheduler job's interval)" },
  },
  additionalProperties: false,
} as const;
export type AutoDreamConfig = FromSchema<typeof autoDreamConfigSchema, { keepDefaultedPropertiesOptional: false }>;
