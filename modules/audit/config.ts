import type { FromSchema } from '@talon/module-sdk';

export const auditConfigSchema = {
  type: 'object',
  properties: {
    flush_interval_ms: {
      type: 'integer',
      minimum: 10,
      maximum: 5000,
      default: 200,
      description: 'queued entries are written at least this often; a crash loses at most this window (a clean stop loses nothing)',
    },
    max_batch: { type: 'integer', minimum: 1, maximum: 100000, default: 2000, description: 'a queue this long is written at once' },
    module_poll_ms: { type: 'integer', minimum: 500, maximum: 60000, default: 2000, description: 'how often module failures are looked for' },
  },
  additionalProperties: false,
} as const;
export type AuditConfig = FromSchema<typeof auditConfigSchema, { keepDefaultedPropertiesOptional: false }>;
