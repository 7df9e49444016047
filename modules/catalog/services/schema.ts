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

/** The media capability names of the spec (plus Transcription), as the media module's contract spells them. */
export const MEDIA_CAPABILITIES = ['ImageGeneration', 'TextToSpeech', 'VideoGeneration', 'MusicGeneration', 'Transcription'] as const;
/** What a media model makes, and the unit its price is per (the media module meters calls in the same words). */
export const MEDIA_KINDS = ['image', 'speech', 'music', 'video', 'transcription'] as const;
export const MEDIA_UNITS = ['images', 'characters', 'seconds', 'songs'] as const;

/** A priced media model of a provider file ([[media_models]]): USD per unit, the provider's public list price. */
export const mediaModelFileEntrySchema = {
  type: 'object',
  properties: {
    id: modelIdSchema,
    display_name: { type: 'string', minLength: 1, maxLength: 200 },
    kind: { type: 'string', enum: MEDIA_KINDS },
    unit: { type: 'string', enum: MEDIA_UNITS },
    usd_per_unit: { type: 'number', minimum: 0 },
  },
  required: ['id', 'kind', 'unit', 'usd_per_unit'],
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
        media_capabilities: { type: 'array', items: { type: 'string', enum: MEDIA_CAPABILITIES }, uniqueItems: true, default: [] },
      },
      required: ['id', 'display_name', 'api_format', 'base_url'],
      additionalProperties: false,
    },
    models: { type: 'array', items: modelFileEntrySchema, default: [] },
    media_models: { type: 'array', items: mediaModelFileEntrySchema, default: [] },
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
export type MediaModelFileEntry = FromSchema<typeof mediaModelFileEntrySchema, Defaulted>;
export type AliasFile = FromSchema<typeof aliasFileSchema, Defaulted>;
export type RegistryBundle = FromSchema<typeof registryBundleSchema>;
