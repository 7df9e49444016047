/**
 * JSON Schemas of the catalogue data: provider files (TOML in bundled/providers,
 * <home>/providers, registry folders) and alias files. Shared by the loader and
 * the custom-model route, so a model means the same thing everywhere.
 */
import type { FromSchema } from 'json-schema-to-ts';

export const TIERS = ['frontier', 'smart', 'balanced', 'fast', 'local', 'custom'] as const;
/** A wire format's name: any name a driver module registers with the llm module (openai, anthropic, gemini, ollama built in). */
export const apiFormatSchema = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9._-]*$' } as const;

export const modelIdSchema = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\s]+$' } as const;

/** Model fields beyond id/display_name/context_window; all optional with defaults. */
export const modelOptionalProperties = {
  tier: { type: 'string', enum: TIERS },
  max_output_tokens: { type: 'integer', minimum: 1 },
  input_cost_per_1m: { type: 'number', minimum: 0, default: 0 },
  output_cost_per_1m: { type: 'number', minimum: 0, default: 0 },
  supports_tools: { type: 'boolean', default: false },
  supports_vision: { type: 'boolean', default: false },
  supports_streaming: { type: 'boolean', default: true },
  aliases: { type: 'array', items: modelIdSchema, default: [] },
} as const;

export const modelFileEntrySchema = {
  type: 'object',
  properties: {
    id: modelIdSchema,
    display_name: { type: 'string', minLength: 1, maxLength: 200 },
    context_window: { type: 'integer', minimum: 1 },
    ...modelOptionalProperties,
    tier: { type: 'string', enum: TIERS, default: 'balanced' },
  },
  required: ['id', 'display_name', 'context_window'],
  additionalProperties: false,
} as const;

export const providerIdSchema = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9._-]*$' } as const;

export const providerFileSchema = {
  type: 'object',
  properties: {
    provider: {
      type: 'object',
      properties: {
        id: providerIdSchema,
        display_name: { type: 'string', minLength: 1, maxLength: 200 },
        api_format: apiFormatSchema,
        base_url: { type: 'string', pattern: '^https?://[^\\s]+$' },
        env_var: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        key_required: { type: 'boolean', default: true },
      },
      required: ['id', 'display_name', 'api_format', 'base_url'],
      additionalProperties: false,
    },
    models: { type: 'array', items: modelFileEntrySchema, default: [] },
  },
  required: ['provider'],
  additionalProperties: false,
} as const;

export const aliasFileSchema = {
  type: 'object',
  properties: {
    aliases: { type: 'object', additionalProperties: modelIdSchema, default: {} },
  },
  additionalProperties: false,
} as const;

/** A registry bundle served at registry_url (JSON): the same content as a folder of provider files. */
export const registryBundleSchema = {
  type: 'object',
  properties: {
    version: { type: 'string', minLength: 1, maxLength: 100 },
    providers: { type: 'array', items: { type: 'object' } },
    aliases: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['providers'],
  additionalProperties: false,
} as const;

type Defaulted = { keepDefaultedPropertiesOptional: false };
export type ProviderFile = FromSchema<typeof providerFileSchema, Defaulted>;
export type ModelFileEntry = FromSchema<typeof modelFileEntrySchema, Defaulted>;
export type AliasFile = FromSchema<typeof aliasFileSchema, Defaulted>;
export type RegistryBundle = FromSchema<typeof registryBundleSchema>;
