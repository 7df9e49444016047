import type { FromSchema } from 'json-schema-to-ts';

/**
 * The kernel's part of config.toml. Module sections are added by each module's
 * own configSchema. One schema validates the file and types `ctx.settings`.
 */
export const kernelSettingsSchema = {
  type: 'object',
  properties: {
    api_listen: {
      type: 'string',
      pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s]+):[0-9]{1,5}$',
      default: '127.0.0.1:4545',
      description: 'host:port the HTTP API listens on',
    },
    api_key: { type: 'string', default: '', description: 'bearer token required on every endpoint but the public ones; empty = open API' },
    cors_origins: { type: 'array', items: { type: 'string' }, default: [], description: 'extra allowed CORS origins' },
    rate_limit_per_second: { type: 'number', exclusiveMinimum: 0, default: 10, description: 'GCRA rate: cost units per second per client IP' },
    log_level: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    max_request_body_bytes: { type: 'integer', minimum: 1024, default: 8388608, description: 'request bodies above this answer 413' },
    default_model: {
      type: 'object',
      properties: {
        provider: { type: 'string', default: 'openai' },
        model: { type: 'string', default: 'gpt-4o-mini' },
        api_key_env: { type: 'string', default: '' },
        base_url: { type: 'string' },
      },
      additionalProperties: false,
      default: {},
    },
    provider_urls: { type: 'object', additionalProperties: { type: 'string' }, default: {} },
    fallback_providers: {
      type: 'array',
      description: 'LLM providers tried in order when the primary keeps failing',
      items: {
        type: 'object',
        properties: {
          provider: { type: 'string' },
          model: { type: 'string' },
          api_key_env: { type: 'string' },
          base_url: { type: 'string' },
        },
        required: ['provider', 'model'],
        additionalProperties: false,
      },
      default: [],
    },
    modules: {
      type: 'object',
      properties: {
        disabled: { type: 'array', items: { type: 'string' }, default: [] },
      },
      additionalProperties: false,
      default: {},
    },
    module_paths: { type: 'array', items: { type: 'string' }, default: [], description: 'folders holding third-party modules' },
  },
  additionalProperties: false,
} as const;

export type KernelSettings = FromSchema<typeof kernelSettingsSchema, { keepDefaultedPropertiesOptional: false }>;

/** JSON Schema as modules write it for their config section and routes. */
export type JsonSchema = Record<string, unknown>;
