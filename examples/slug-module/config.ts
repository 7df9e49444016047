import type { FromSchema } from '@talon/module-sdk';

export const slugConfigSchema = {
  type: 'object',
  properties: {
    separator: { type: 'string', enum: ['-', '_', '.'], default: '-', description: 'the character between words' },
    max_length: { type: 'integer', minimum: 8, maximum: 200, default: 60, description: 'longest slug, in characters' },
  },
  additionalProperties: false,
} as const;

export type SlugConfig = FromSchema<typeof slugConfigSchema, { keepDefaultedPropertiesOptional: false }>;
