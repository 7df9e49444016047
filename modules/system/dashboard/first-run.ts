/**
 * The steps of a first run, as calls to the service's API: the home's guided setup (setup.tsx) and `talon init`
 * (bin/init.ts) take the same steps through their own HTTP client, so both choose, test and store alike. No DOM and
 * no Node here: only `call`.
 */

/** A JSON call to the service: GET without `json`, POST with it unless `method` says otherwise; throws on a refusal. */
export type Call = <T>(path: string, init?: { method?: string; json?: unknown }) => Promise<T>;

export interface Provider {
  name: string;
  display_name: string;
  auth_status: 'configured' | 'no_key_needed' | 'missing';
  key_source: 'stored' | 'environment' | 'none';
  key_required: boolean;
  env_var?: string;
  base_url: string;
  model_count: number;
}

/** What GET /api/providers/{runtime}/detect found at a local runtime's address. */
export interface Detected {
  provider: string;
  reachable: boolean;
  base_url: string;
  models: string[];
  error?: string;
}

export interface ProviderChoice {
  provider: Provider;
  /** A local runtime's probe, made by the service (the browser never reaches into the machine's ports itself). */
  detected?: Detected;
  /** It has a key (stored or in the environment), or it is a local runtime that answered. */
  ready: boolean;
}

/** The local model servers the catalog's detection knows (GET /api/providers/{name}/detect). */
export const LOCAL_RUNTIMES = ['ollama', 'lmstudio', 'vllm', 'llamacpp'];

const seg = encodeURIComponent;

/**
 * Every provider, those ready first (a key, then a local runtime that answered), then the other local runtimes, then
 * the rest by name. The local runtimes are probed through the service, at their configured or default address.
 */
export async function providerChoices(call: Call): Promise<ProviderChoice[]> {
  // A provider without chat models (media only: elevenlabs) cannot be the default model.
  const providers = (await call<{ providers: Provider[] }>('/api/providers')).providers.filter((p) => p.model_count > 0);
  const local = providers.filter((p) => LOCAL_RUNTIMES.includes(p.name));
  const probes = await Promise.all(local.map((p) => call<Detected>(`/api/providers/${seg(p.name)}/detect`).catch(() => undefined)));
  const detected = new Map(local.map((p, i) => [p.name, probes[i]]));
  const rank = (c: ProviderChoice) => (c.provider.key_source !== 'none' ? 0 : c.ready ? 1 : c.detected ? 2 : 3);
  return providers
    .map((provider) => {
      const probe = detected.get(provider.name);
      return { provider, detected: probe, ready: provider.key_source !== 'none' || probe?.reachable === true };
    })
    .sort((a, b) => rank(a) - rank(b) || a.provider.name.localeCompare(b.provider.name));
}

/** Stores a key for the provider (sealed by the secrets module; never read back). */
export async function storeKey(call: Call, provider: string, key: string): Promise<void> {
  await call(`/api/providers/${seg(provider)}/key`, { json: { api_key: key } });
}

export interface Tested {
  latency_ms?: number;
  /** Model ids the provider itself named: a local runtime's listing, or the model the key test found. */
  models: string[];
}

/** Checks that the provider answers with its key: a local runtime is probed again, any other lists its models. */
export async function testProvider(call: Call, provider: string): Promise<Tested> {
  if (LOCAL_RUNTIMES.includes(provider)) {
    const d = await call<Detected>(`/api/providers/${seg(provider)}/detect`);
    if (!d.reachable) throw new Error(`${provider} does not answer at ${d.base_url}${d.error ? `: ${d.error}` : ''}`);
    return { models: d.models };
  }
  const t = await call<{ latency_ms: number; model_tested: string | null }>(`/api/providers/${seg(provider)}/test`, { method: 'POST' });
  return { latency_ms: t.latency_ms, models: t.model_tested ? [t.model_tested] : [] };
}

/** The models to offer as the default: what the provider named first, then the catalogue's, each once. */
export async function modelChoices(call: Call, provider: string, tested: string[]): Promise<string[]> {
  const detail = await call<{ models: { id: string }[] }>(`/api/providers/${seg(provider)}`);
  return [...new Set([...tested, ...detail.models.map((m) => m.id)])];
}

/**
 * Makes provider/model the default model ([default_model] of config.toml, through the config API). Its key and URL
 * then come from the catalog (a stored key, else the provider's variable; its URL settings), so a variable or URL set
 * for an earlier default provider is cleared rather than sent to this one.
 */
export async function setDefaultModel(call: Call, provider: string, model: string): Promise<void> {
  await call('/api/config/set', { json: { path: 'default_model', value: { provider, model, api_key_env: '', base_url: '' } } });
}

export interface Template {
  name: string;
  description: string;
}

export async function templates(call: Call): Promise<Template[]> {
  return (await call<{ templates: Template[] }>('/api/templates')).templates;
}

/** Spawns an agent from a template as it is (its name is the template's); answers the new agent's id. */
export async function spawnFromTemplate(call: Call, template: string): Promise<string> {
  const { manifest_toml } = await call<{ manifest_toml: string }>(`/api/templates/${seg(template)}`);
  return (await call<{ agent_id: string }>('/api/agents', { json: { manifest_toml } })).agent_id;
}
