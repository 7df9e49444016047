/**
 * Response schemas of the catalog routes. They serialise the replies (fields not listed are
 * dropped, so each lists every field) and document them in GET /api/openapi.json.
 */
import { MEDIA_CAPABILITIES, MEDIA_KINDS, MEDIA_UNITS, TIERS } from '../services/schema.ts';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;

export const modelResponse = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'may contain slashes' },
    provider: str,
    display_name: str,
    tier: { type: 'string', enum: TIERS },
    context_window: int,
    max_output_tokens: int,
    input_cost_per_1m: { type: 'number', description: 'USD per million input tokens' },
    output_cost_per_1m: { type: 'number', description: 'USD per million output tokens' },
    supports_tools: bool,
    supports_vision: bool,
    supports_streaming: bool,
    aliases: { type: 'array', items: str },
    custom: bool,
  },
  required: [
    'id',
    'provider',
    'display_name',
    'tier',
    'context_window',
    'input_cost_per_1m',
    'output_cost_per_1m',
    'supports_tools',
    'supports_vision',
    'supports_streaming',
  ],
  additionalProperties: false,
} as const;

export const modelListResponse = {
  type: 'object',
  properties: { models: { type: 'array', items: modelResponse }, total: int },
  required: ['models', 'total'],
  additionalProperties: false,
} as const;

export const aliasListResponse = {
  type: 'object',
  properties: { aliases: { type: 'object', additionalProperties: str, description: 'alias → model id' }, total: int },
  required: ['aliases', 'total'],
  additionalProperties: false,
} as const;

export const aliasResponse = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['created', 'updated'] }, alias: str, model_id: str },
  required: ['status', 'alias', 'model_id'],
  additionalProperties: false,
} as const;

export const providerResponse = {
  type: 'object',
  properties: {
    name: str,
    display_name: str,
    auth_status: { type: 'string', enum: ['configured', 'no_key_needed', 'missing'] },
    key_source: {
      type: 'string',
      enum: ['stored', 'environment', 'none'],
      description: 'where the key sent comes from: a stored key wins over the environment',
    },
    env_var: { type: 'string', description: 'absent for providers that need no key' },
    base_url: str,
    model_count: int,
    api_format: { type: 'string', description: 'wire format name (a driver module registers it)' },
    key_required: bool,
    media_capabilities: {
      type: 'array',
      items: { type: 'string', enum: MEDIA_CAPABILITIES },
      description: 'what the provider offers to the media module; empty when nothing',
    },
  },
  required: ['name', 'display_name', 'auth_status', 'key_source', 'base_url', 'model_count', 'api_format', 'key_required', 'media_capabilities'],
  additionalProperties: false,
} as const;

export const mediaModelResponse = {
  type: 'object',
  properties: {
    id: str,
    provider: str,
    display_name: str,
    kind: { type: 'string', enum: MEDIA_KINDS },
    unit: { type: 'string', enum: MEDIA_UNITS },
    usd_per_unit: { type: 'number', description: "the provider's public list price in USD per unit" },
  },
  required: ['id', 'provider', 'kind', 'unit', 'usd_per_unit'],
  additionalProperties: false,
} as const;

export const providerDetailResponse = {
  ...providerResponse,
  properties: {
    ...providerResponse.properties,
    models: { type: 'array', items: modelResponse },
    media_models: { type: 'array', items: mediaModelResponse, description: 'priced media models (images, speech, music, video, transcription)' },
  },
  required: [...providerResponse.required, 'models', 'media_models'],
  additionalProperties: false,
} as const;

export const providerListResponse = {
  type: 'object',
  properties: { providers: { type: 'array', items: providerResponse }, total: int },
  required: ['providers', 'total'],
  additionalProperties: false,
} as const;

export const aliasRemovedResponse = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['removed'] }, alias: str },
  required: ['status', 'alias'],
  additionalProperties: false,
} as const;
export const modelRemovedResponse = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['removed'] }, id: str },
  required: ['status', 'id'],
  additionalProperties: false,
} as const;
export const keyResponse = (status: 'configured' | 'removed') =>
  ({
    type: 'object',
    properties: { status: { type: 'string', enum: [status] }, provider: str },
    required: ['status', 'provider'],
    additionalProperties: false,
  }) as const;

export const testResponse = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['ok'] }, provider: str, latency_ms: int, model_tested: { type: ['string', 'null'] } },
  required: ['status', 'provider', 'latency_ms', 'model_tested'],
  additionalProperties: false,
} as const;

export const urlResponse = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['updated'] }, provider: str, base_url: str },
  required: ['status', 'provider', 'base_url'],
  additionalProperties: false,
} as const;

export const detectResponse = {
  type: 'object',
  properties: { provider: str, reachable: bool, base_url: str, models: { type: 'array', items: str }, latency_ms: int, error: str },
  required: ['provider', 'reachable', 'base_url', 'models'],
  additionalProperties: false,
} as const;

export const oauthStartResponse = {
  type: 'object',
  properties: { poll_id: str, device_code: str, user_code: str, verification_uri: str, expires_in: int, interval: int },
  required: ['poll_id', 'device_code', 'user_code', 'verification_uri', 'expires_in', 'interval'],
  additionalProperties: false,
} as const;

export const oauthPollResponse = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['pending', 'authorized', 'expired', 'denied'] }, provider: str },
  required: ['status', 'provider'],
  additionalProperties: false,
} as const;

export const updateResponse = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['updated', 'unchanged'] },
    added: int,
    updated: int,
    removed: int,
    version: str,
    models: { type: 'string', enum: ['not_configured'], description: 'present when no model registry is configured: the model catalogue is unchanged' },
    parts: {
      type: 'object',
      description: 'the catalogues of other modules updated with it, by name (mcp: the MCP catalogue from the hub registry)',
      additionalProperties: {
        type: 'object',
        properties: { status: { type: 'string', enum: ['updated', 'failed'] }, source: str, count: int, error: str },
        required: ['status', 'source', 'count'],
        additionalProperties: false,
      },
    },
  },
  required: ['status', 'added', 'updated', 'removed', 'version'],
  additionalProperties: false,
} as const;

export const statusResponse = {
  type: 'object',
  properties: {
    version: str,
    last_update: { type: ['string', 'null'], description: 'ISO time of the last applied update; null before any' },
    provider_count: int,
    model_count: int,
    available_updates: {
      type: 'integer',
      description: 'models and media prices a POST /api/catalog/update would change (local registry_dir only)',
    },
    source: { type: 'string', description: "'builtin', or the registry folder or URL of the last update" },
  },
  required: ['version', 'last_update', 'provider_count', 'model_count', 'available_updates'],
  additionalProperties: false,
} as const;
