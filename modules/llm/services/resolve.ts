import type { CatalogService } from '@talon/catalog';
import type { ModelRef, ProviderTarget } from '../api.ts';
import type { LlmConfig } from '../config.ts';
import { llmError } from './errors.ts';

export interface ResolveDeps {
  defaults: LlmConfig['default_model'];
  catalog: Pick<CatalogService, 'provider' | 'resolveAlias' | 'apiKey' | 'baseUrl' | 'configuredUrl'>;
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
  const dm = deps.defaults;
  const useDefault = ref.provider === 'default' || ref.provider === '';
  const provider = useDefault ? dm.provider : ref.provider;
  const requested = useDefault && (ref.model === '' || ref.model === 'default') ? dm.model : ref.model;
  if (!requested) throw llmError(`no model given for provider '${provider}'`, { status: 400, provider });
  const model = deps.catalog.resolveAlias(requested);
  const entry = deps.catalog.provider(provider);
  const isDefaultProvider = provider === dm.provider;

  const baseUrl = ref.baseUrl || deps.catalog.configuredUrl(provider) || (isDefaultProvider ? dm.base_url : undefined) || deps.catalog.baseUrl(provider);
  if (!baseUrl) {
    throw llmError(`unknown provider '${provider}': it is not in the catalog; set base_url for a custom OpenAI-compatible endpoint`, { status: 400, provider });
  }

  const apiKey =
    envValue(deps.env, ref.apiKeyEnv) ??
    (isDefaultProvider ? envValue(deps.env, dm.api_key_env) : undefined) ??
    (entry ? deps.catalog.apiKey(provider) : envValue(deps.env, conventionalKeyEnv(provider)));
  if (entry?.key_required && !apiKey) {
    const envVar = ref.apiKeyEnv || entry.env_var || conventionalKeyEnv(provider);
    throw llmError(`no API key for provider '${provider}': set ${envVar} or POST /api/providers/${provider}/key`, { status: 401, provider });
  }
  return { provider, model, apiFormat: entry?.api_format ?? 'openai', baseUrl: baseUrl.replace(/\/+$/, ''), apiKey, maxRetries: deps.maxRetries };
}
