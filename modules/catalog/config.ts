/** The [catalog] config section and the top-level [provider_urls] table the catalog owns. */
import type { FromSchema } from '@talon/module-sdk';

const url = { type: 'string', pattern: '^https?://[^\\s]+$' } as const;

const sectionProperties = {
  registry_dir: {
    type: 'string',
    default: '',
    description: 'folder of provider TOML files (or holding providers/ and aliases.toml) used by POST /api/catalog/update; relative to the home',
  },
  registry_url: {
    type: 'string',
    default: '',
    description: 'http(s) address of a JSON registry bundle {version, providers: [...], aliases} (used when registry_dir is empty)',
  },
  registry_timeout_ms: { type: 'integer', minimum: 100, default: 15000, description: 'bound of a registry_url download' },
  test_timeout_ms: { type: 'integer', minimum: 100, default: 10000, description: 'bound of POST /api/providers/{name}/test' },
  detect_timeout_ms: { type: 'integer', minimum: 100, default: 2000, description: 'bound of GET /api/providers/{runtime}/detect' },
  detect_urls: {
    type: 'object',
    additionalProperties: url,
    default: {},
    description: 'base URL probed per local runtime (ollama, lmstudio, vllm, llamacpp)',
  },
  copilot_oauth: {
    type: 'object',
    description: 'the GitHub device-flow login of POST /api/providers/github-copilot/oauth/start',
    properties: {
      client_id: { type: 'string', default: 'Iv1.b507a08c87ecfe98', description: 'OAuth client id' },
      scope: { type: 'string', default: 'read:user', description: 'OAuth scope asked for' },
      device_code_url: { ...url, default: 'https://github.com/login/device/code', description: 'device authorization endpoint' },
      token_url: { ...url, default: 'https://github.com/login/oauth/access_token', description: 'token endpoint' },
    },
    additionalProperties: false,
    default: {},
  },
} as const;

export const configSchema = { type: 'object', properties: sectionProperties, additionalProperties: false } as const;

/** Top-level keys the catalog owns (module.toml config_keys). */
export const configKeys = {
  provider_urls: {
    type: 'object',
    additionalProperties: { type: 'string' },
    default: {},
    description: 'base URL per provider name (ollama = "http://127.0.0.1:11434"); PUT /api/providers/{name}/url wins over it',
  },
} as const;

const catalogConfig = { type: 'object', properties: { ...sectionProperties, ...configKeys }, additionalProperties: false } as const;

/** [catalog] plus [provider_urls], as ctx.config holds them. */
export type CatalogConfig = FromSchema<typeof catalogConfig, { keepDefaultedPropertiesOptional: false }>;
