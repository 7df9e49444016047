/**
 * Contract of the catalog module (`@talon/catalog`): providers, models, aliases and prices. Provider keys are stored
 * by the secrets module (`@talon/secrets`); apiKey() answers from there, else the provider's env var. The llm module
 * resolves model references through it; usage prices calls with it.
 */
import { AsyncSeriesHook, defineHooks, serviceRef } from '@talon/module-sdk';

export type ModelTier = 'frontier' | 'smart' | 'balanced' | 'fast' | 'local' | 'custom';

export interface ModelEntry {
  id: string;
  provider: string;
  display_name: string;
  tier: ModelTier;
  context_window: number;
  max_output_tokens?: number;
  input_cost_per_1m: number;
  output_cost_per_1m: number;
  supports_tools: boolean;
  supports_vision: boolean;
  supports_streaming: boolean;
  aliases?: string[];
  custom?: boolean;
}

export interface ProviderEntry {
  name: string;
  display_name: string;
  /** The wire format's name ('openai', 'anthropic', ...): any name a driver module registers with the llm module. */
  api_format: string;
  base_url: string;
  /** Environment variable holding the key; absent for providers that need none. */
  env_var?: string;
  key_required: boolean;
  /** The media capabilities the provider offers; absent when none. */
  media_capabilities?: MediaCapabilityName[];
}

/** The spec's media capability names (plus Transcription), as the media module's contract spells them. */
export type MediaCapabilityName = 'ImageGeneration' | 'TextToSpeech' | 'VideoGeneration' | 'MusicGeneration' | 'Transcription';

/** What a media model makes, and what its price is counted in (the media module meters in the same words). */
export type MediaModelKind = 'image' | 'speech' | 'music' | 'video' | 'transcription';
export type MediaPriceUnit = 'images' | 'characters' | 'seconds' | 'songs';

/** A priced media model of a provider ([[media_models]] of its catalogue file). */
export interface MediaModelEntry {
  id: string;
  provider: string;
  display_name?: string;
  kind: MediaModelKind;
  unit: MediaPriceUnit;
  /** The provider's public list price in USD per unit. */
  usd_per_unit: number;
}

export interface CatalogService {
  providers(): ProviderEntry[];
  provider(name: string): ProviderEntry | undefined;
  models(filter?: { provider?: string; tier?: string }): ModelEntry[];
  /** By id, or by alias. */
  model(idOrAlias: string): ModelEntry | undefined;
  /** Alias → model id; the input itself when it is no alias. */
  resolveAlias(name: string): string;
  /** The key for a provider: stored key first, then its env var. Never exposed over HTTP. */
  apiKey(provider: string): string | undefined;
  /** Base URL after [provider_urls] and PUT /api/providers/{name}/url overrides. */
  baseUrl(provider: string): string | undefined;
  /**
   * The base URL someone chose for the provider, if any: PUT /api/providers/{name}/url, else
   * [provider_urls]. It wins over [default_model].base_url; the catalogue's own URL does not.
   */
  configuredUrl(provider: string): string | undefined;
  /** USD cost of a call, from catalogue prices (0 when the model is unknown). */
  cost(provider: string, model: string, inputTokens: number, outputTokens: number): number;
  /** The list price of a provider's media model; undefined when the catalogue does not price it. */
  mediaPrice(provider: string, model: string): { unit: MediaPriceUnit; usd_per_unit: number } | undefined;
}

export const catalogService = serviceRef<CatalogService>('catalog.service');

/** What an update did to one catalogue another module keeps (the MCP catalogue...). */
export interface CatalogPartOutcome {
  status: 'updated' | 'failed';
  /** Where its entries came from ('registry:hub'...). */
  source: string;
  /** Entries it holds from that source after the update. */
  count: number;
  error?: string;
}

export const catalogHooks = defineHooks('catalog.hooks', () => ({
  /**
   * POST /api/catalog/update: modules whose catalogues come from a registry update them too, each writing its
   * outcome under its name (`parts.mcp = {...}`). It runs once the model registry has been read without error.
   */
  update: new AsyncSeriesHook<[{ parts: Record<string, CatalogPartOutcome> }]>(['report']),
}));
