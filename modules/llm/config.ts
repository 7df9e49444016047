import type { FromSchema } from '@talon/module-sdk';

/** The [llm] section: retry and timeout policy of provider calls. */
export const llmSectionProperties = {
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
} as const;

export const llmConfigSchema = { type: 'object', properties: llmSectionProperties, additionalProperties: false } as const;

/** The top-level keys the llm module owns (module.toml config_keys). */
export const llmConfigKeys = {
  default_model: {
    type: 'object',
    description: 'the model used when an agent or a call asks for provider "default"',
    properties: {
      provider: { type: 'string', default: 'openai', description: 'provider name (GET /api/providers)' },
      model: { type: 'string', default: 'gpt-4o-mini', description: 'model id or alias' },
      api_key_env: { type: 'string', default: '', description: 'environment variable holding the key; "" = a stored key, else the provider\'s usual variable' },
      base_url: {
        type: 'string',
        default: '',
        description: 'base URL of the default provider when neither PUT /api/providers/{name}/url nor [provider_urls] sets one; "" = the catalogue\'s URL',
      },
    },
    additionalProperties: false,
    default: {},
  },
  fallback_providers: {
    type: 'array',
    description: 'LLM providers tried in order when the primary keeps failing ([[fallback_providers]] tables)',
    items: {
      type: 'object',
      properties: {
        provider: { type: 'string', description: 'provider name' },
        model: { type: 'string', description: 'model id or alias' },
        api_key_env: { type: 'string', default: '', description: 'environment variable holding the key; "" = the provider\'s own' },
        base_url: { type: 'string', default: '', description: '"" = the provider\'s configured or catalogue URL' },
      },
      required: ['provider', 'model'],
      additionalProperties: false,
    },
    default: [],
  },
} as const;

const llmConfig = { type: 'object', properties: { ...llmSectionProperties, ...llmConfigKeys }, additionalProperties: false } as const;

/** [llm] plus the claimed default_model and fallback_providers, as ctx.config holds them. */
export type LlmConfig = FromSchema<typeof llmConfig, { keepDefaultedPropertiesOptional: false }>;
