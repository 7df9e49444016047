import type { FromSchema } from '@talon/module-sdk';

export const hooksConfigSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', default: false, description: 'serve POST /api/hooks/wake and /api/hooks/agent (they answer 404 while off)' },
    token: {
      type: 'string',
      default: '',
      description: 'bearer token of the hook routes (at least 32 characters, never the api_key); empty: read token_env',
      anyOf: [{ const: '' }, { minLength: 32 }],
      'x-error': 'use a random token of at least 32 characters, or leave it empty and set the variable named by token_env',
    },
    token_env: { type: 'string', minLength: 1, default: 'TALON_HOOK_TOKEN', description: 'environment variable holding the token when token is empty' },
    max_body_bytes: { type: 'integer', minimum: 256, maximum: 1048576, default: 65536, description: 'largest request body; bigger ones get 413' },
    rate_limit_per_minute: { type: 'integer', minimum: 1, maximum: 100000, default: 30, description: 'requests per client address per minute; more get 429' },
    wake_retention_days: {
      type: 'integer',
      minimum: 1,
      maximum: 3650,
      default: 7,
      description: 'delivered wakes (and their Idempotency-Key) are kept this long, then deleted (at start and hourly); undelivered ones stay',
    },
    max_pending_wakes: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: 10000,
      description: 'undelivered wakes kept at most; beyond it POST /api/hooks/wake answers 503 with Retry-After',
    },
    hold_delivery: {
      type: 'boolean',
      default: false,
      description:
        'maintenance switch: wakes are stored and acknowledged but not published until this is false again (then the backlog goes out in order); the crash test uses it to stop the service between the answer and the delivery',
    },
    default_agent: { type: 'string', default: '', description: 'agent (name or id) of /api/hooks/agent when the body names none; empty: the first agent' },
  },
  additionalProperties: false,
} as const;

export type HooksConfig = FromSchema<typeof hooksConfigSchema, { keepDefaultedPropertiesOptional: false }>;
