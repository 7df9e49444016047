import type { FromSchema } from '@talon/module-sdk';

/** Values people leave in place of a real key (the reference's users were burned by exactly this). */
export const PLACEHOLDER_KEYS = ['changeme', 'change-me', 'undefined', 'null', 'secret', 'password', 'apikey', 'api_key', 'your-api-key', 'xxx'];

/**
 * Long placeholders pass the length rule, so their shapes are refused too: one character repeated, the words people
 * leave in sample keys ("your-api-key-here", "changeme-please", "replace-me", "placeholder", "example-key"), and an
 * environment reference that was never expanded ("${TALON_API_KEY}", "<your key>"). JSON Schema patterns have no
 * case flag, hence the character classes.
 */
const PLACEHOLDER_SHAPES = [
  '^(.)\\1*$',
  '[Cc][Hh][Aa][Nn][Gg][Ee][-_ .]?[Mm][Ee]',
  '[Yy][Oo][Uu][Rr][-_ .]?([Aa][Pp][Ii][-_ .]?)?([Kk][Ee][Yy]|[Tt][Oo][Kk][Ee][Nn]|[Ss][Ee][Cc][Rr][Ee][Tt])',
  '[Rr][Ee][Pp][Ll][Aa][Cc][Ee][-_ .]?[Mm][Ee]',
  '[Pp][Ll][Aa][Cc][Ee][Hh][Oo][Ll][Dd][Ee][Rr]',
  '[Ee][Xx][Aa][Mm][Pp][Ll][Ee][-_ .]?([Aa][Pp][Ii][-_ .]?)?[Kk][Ee][Yy]',
  '^\\$\\{.*\\}$|^<.*>$',
];

export const authConfigKeys = {
  api_key: {
    type: 'string',
    default: '',
    description: 'bearer token for every endpoint but the public ones; empty = no key, and then only loopback clients are served',
    anyOf: [{ const: '' }, { minLength: 16, not: { anyOf: [{ enum: PLACEHOLDER_KEYS }, ...PLACEHOLDER_SHAPES.map((pattern) => ({ pattern }))] } }],
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
