/** The [catalog] config section. */
import type { FromSchema } from 'json-schema-to-ts';

const url = { type: 'string', pattern: '^https?://[^\\s]+$' } as const;

export const configSchema = {
  type: 'object',
  properties: {
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
    registry_timeout_ms: { type: 'integer', minimum: 100, default: 15000 },
    test_timeout_ms: { type: 'integer', minimum: 100, default: 10000, description: 'POST /api/providers/{name}/test' },
    detect_timeout_ms: { type: 'integer', minimum: 100, default: 2000, description: 'GET /api/providers/{runtime}/detect' },
    detect_urls: {
      type: 'object',
      additionalProperties: url,
      default: {},
      description: 'base URL probed per local runtime (ollama, lmstudio, vllm, llamacpp)',
    },
    copilot_oauth: {
      type: 'object',
      properties: {
        client_id: { type: 'string', default: 'Iv1.b507a08c87ecfe98' },
        scope: { type: 'string', default: 'read:user' },
        device_code_url: { ...url, default: 'https://github.com/login/device/code' },
        token_url: { ...url, default: 'https://github.com/login/oauth/access_token' },
      },
      additionalProperties: false,
      default: {},
    },
  },
  additionalProperties: false,
} as const;

export type CatalogConfig = FromSchema<typeof configSchema, { keepDefaultedPropertiesOptional: false }>;
