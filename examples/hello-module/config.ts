import type { FromSchema } from '@talon/module-sdk';

export const helloConfigSchema = {
  type: 'object',
  properties: {
    greeting: { type: 'string', minLength: 1, default: 'Hello' },
  },
  additionalProperties: false,
} as const;

export type HelloConfig = FromSchema<typeof helloConfigSchema, { keepDefaultedPropertiesOptional: false }>;
