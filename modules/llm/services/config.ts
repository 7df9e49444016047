import type { FromSchema } from 'json-schema-to-ts';

export const llmConfigSchema = {
  type: 'object',
  properties: {
    max_retries: {
      type: 'integer',
      minimum: 0,
      maximum: 10,
      default: 3,
      description: 'retries of one provider on 429/408/5xx/network errors (attempts = retries + 1)',
    },
    retry_base_ms: { type: 'integer', minimum: 0, default: 2000, description: 'first backoff delay; doubles per retry' },
    retry_max_ms: {
      type: 'integer',
      minimum: 0,
      default: 60000,
      description: 'cap of the exponential backoff (a Retry-After above it still wins, up to 300 s)',
    },
    request_timeout_secs: {
      type: 'number',
      exclusiveMinimum: 0,
      default: 120,
      description: 'bound of one provider request; for streams, of the wait for each next event',
    },
  },
  additionalProperties: false,
} as const;

export type LlmConfig = FromSchema<typeof llmConfigSchema, { keepDefaultedPropertiesOptional: false }>;
