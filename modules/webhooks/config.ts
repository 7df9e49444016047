import type { FromSchema } from '@talon/module-sdk';

export const webhooksConfigSchema = {
  type: 'object',
  properties: {
    allow_hosts: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'hosts (globs, IPs or CIDRs) webhooks may target although private or loopback; public addresses need no entry',
    },
    max_attempts: { type: 'integer', minimum: 1, maximum: 50, default: 8, description: 'attempts per delivery before it is marked failed' },
    retry_base_ms: { type: 'integer', minimum: 1, maximum: 600000, default: 1000, description: 'first retry delay; doubled after each failed attempt' },
    retry_max_ms: { type: 'integer', minimum: 1, maximum: 86400000, default: 300000, description: 'longest retry delay' },
    timeout_ms: { type: 'integer', minimum: 100, maximum: 120000, default: 10000, description: 'time allowed for one attempt' },
    concurrency: { type: 'integer', minimum: 1, maximum: 64, default: 4, description: 'attempts in flight at once' },
    journal_retention_days: {
      type: 'integer',
      minimum: 1,
      maximum: 3650,
      default: 7,
      description: 'delivered and failed journal rows older than this are deleted (pending rows stay until they end)',
    },
    disable_after_failures: {
      type: 'integer',
      minimum: 1,
      maximum: 10000,
      default: 20,
      description: 'consecutive failed attempts after which a webhook is disabled (its reason is shown; its queued deliveries wait)',
    },
  },
  additionalProperties: false,
} as const;

export type WebhooksConfig = FromSchema<typeof webhooksConfigSchema, { keepDefaultedPropertiesOptional: false }>;
