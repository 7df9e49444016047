import { LlmError, type ApiFormat, type ModelRef, type ProviderTarget } from '../api.ts';
import type { CatalogService } from '../../catalog/api.ts';

export interface ResolveSettings {
  default_model: { provider: string; model: string; api_key_env?: string; base_url?: string };
  provider_urls: Record<string, string>;
}

export interface ResolveDeps {
  settings: ResolveSettings;
  catalog: Pick<CatalogService, 'provider' | 'resolveAlias' | 'apiKey' | 'baseUrl' | 'urlOverride'>;
  env: Record<string, string | undefined>;
  maxRetries: number;
}

/** The conventional key variable of a provider the catalog does not know: OPENROUTER_API_KEY, MY_LLM_API_KEY. */
export const conventionalKeyEnv = (provider: string) => `${provider.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_API_KEY`;

const envValue = (env: ResolveDeps['env'], name: string | undefined) => (name ? env[name]?.trim() || undefined : undefined);

/**
 * Where a model reference goes. Precedence (first set wins):
 * - base URL: ref.baseUrl > PUT /api/providers/{name}/url > [provider_urls] > [default_model].base_url (default provider only) > catalog;
 * - key: env var ref.apiKeyEnv > [default_model].api_key_env (default provider only) > catalog (stored key, then its env var).
 * An unknown provider with a base URL speaks the OpenAI format.
 */
export function resolveTarget(ref: ModelRef, deps: ResolveDeps): ProviderTarget {
  const dm = deps.settings.default_model;
  const useDefault = ref.provider === 'default' || ref.provider === '';
  const provider = useDefault ? dm.provider : ref.provider;
  const requested = useDefault && (ref.model === '' || ref.model === 'default') ? dm.model : ref.model;
  if (!requested) throw new LlmError(`no model given for provider '${provider}'`, 400, undefined, provider);
  const model = deps.catalog.resolveAlias(requested);
  const entry = deps.catalog.provider(provider);
  const isDefaultProvider = provider === dm.provider;

  const baseUrl =
    ref.baseUrl ||
    deps.catalog.urlOverride(provider) ||
    deps.settings.provider_urls[provider] ||
    (isDefaultProvider ? dm.base_url : undefined) ||
    deps.catalog.baseUrl(provider);
  if (!baseUrl) {
    throw new LlmError(
      `unknown provider '${provider}': it is not in the catalog; set base_url for a custom OpenAI-compatible endpoint`,
      400,
      undefined,
      provider,
    );
  }
  const apiFormat: ApiFormat = entry?.api_format ?? 'openai';

  const apiKey =
    envValue(deps.env, ref.apiKeyEnv) ??
    (isDefaultProvider ? envValue(deps.env, dm.api_key_env) : undefined) ??
    (entry ? deps.catalog.apiKey(provider) : envValue(deps.env, conventionalKeyEnv(provider)));
  if (entry?.key_required && !apiKey) {
    const envVar = ref.apiKeyEnv || entry.env_var || conventionalKeyEnv(provider);
    throw new LlmError(`no API key for provider '${provider}': set ${envVar} or POST /api/providers/${provider}/key`, 401, undefined, provider);
  }
  return { provider, model, apiFormat, baseUrl: baseUrl.replace(/\/+$/, ''), apiKey, maxRetries: deps.maxRetries };
}
