import type { FromSchema } from '@talon/module-sdk';

/** Values people leave in place of a real key (the reference's users were burned by exactly this). */
export const PLACEHOLDER_KEYS = ['changeme', 'change-me', 'undefined', 'null', 'secret', 'password', 'apikey', 'api_key', 'your-api-key', 'xxx'];

export const authConfigKeys = {
  api_key: {
    type: 'string',
    default: '',
    description: 'bearer token for every endpoint but the public ones; empty = no key, and then only loopback clients are served',
    anyOf: [{ const: '' }, { minLength: 16, not: { enum: PLACEHOLDER_KEYS } }],
    'x-error': 'leave it empty (loopback only) or use a random key of at least 16 characters, not a placeholder such as "changeme"',
  },
} as const;

export const authConfigSchema = {
  type: 'object',
  properties: {
    allow_keyless_network: {
      type: 'boolean',
      default: false,
      description: 'serve clients beyond loopback without api_key (anyone on the network can then drive agents and tools)',
    },
  },
  additionalProperties: false,
} as const;

const allKeys = { type: 'object', properties: { ...authConfigKeys, ...authConfigSchema.properties }, additionalProperties: false } as const;

export type AuthConfig = FromSchema<typeof allKeys, { keepDefaultedPropertiesOptional: false }>;
