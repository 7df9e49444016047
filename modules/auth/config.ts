import type { FromSchema } from '@talon/module-sdk';

export const authConfigKeys = {
  api_key: {
    type: 'string',
    default: '',
    description: 'bearer token required on every endpoint but the public ones; empty = open API, reachable from loopback only',
  },
} as const;

const authConfigSchema = { type: 'object', properties: authConfigKeys, additionalProperties: false } as const;

export type AuthConfig = FromSchema<typeof authConfigSchema, { keepDefaultedPropertiesOptional: false }>;
