import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { LlmService } from '@talon/llm';
import type { MemoryConfig } from '../config.ts';

export interface EmbeddingTarget {
  baseUrl: string;
  apiKey?: string;
  model: string;
}

/** Cloud providers with an OpenAI-compatible /embeddings, by the variable holding their key (the reference's order). */
const DETECT_CLOUD: ReadonlyArray<[string, string]> = [
  ['OPENAI_API_KEY', 'openai'],
  ['OPENROUTER_API_KEY', 'openrouter'],
  ['MISTRAL_API_KEY', 'mistral'],
  ['TOGETHER_API_KEY', 'together'],
  ['FIREWORKS_API_KEY', 'fireworks'],
];
/** Local servers, by the variable holding their address (checked after the cloud keys, as the reference does). */
const DETECT_LOCAL = ['OLLAMA_HOST', 'VLLM_BASE_URL', 'LMSTUDIO_BASE_URL'];

/** An address as these variables hold it ("127.0.0.1:11434", "http://host:8000") → its OpenAI-compatible base URL. */
function openAiBase(address: string): string {
  const url = (/^https?:\/\//i.test(address) ? address : `http://${address}`).replace(/\/+$/, '');
  return /\/v1$/.test(url) ? url : `${url}/v1`;
}

/**
 * embedding_provider = "auto": the first provider the environment names — a cloud key (OPENAI_API_KEY,
 * OPENROUTER_API_KEY, MISTRAL_API_KEY, TOGETHER_API_KEY, FIREWORKS_API_KEY), else a local server (OLLAMA_HOST,
 * VLLM_BASE_URL, LMSTUDIO_BASE_URL). A provider name or a base URL, with the variable that chose it; undefined: none.
 */
export function detectEmbeddingProvider(env: NodeJS.ProcessEnv = process.env): { provider: string; from: string } | undefined {
  for (const [variable, provider] of DETECT_CLOUD) if (env[variable]?.trim()) return { provider, from: variable };
  for (const variable of DETECT_LOCAL) {
    const address = env[variable]?.trim();
    if (address) return { provider: openAiBase(address), from: variable };
  }
  return undefined;
}

const isLoopbackUrl = (url: string) => /^https?:\/\/(localhost|127\.[\d.]+|\[::1\])(:\d+)?(\/|$)/i.test(url);

/**
 * Resolves [memory] embedding_provider to an OpenAI-compatible endpoint: a
 * URL is used as is, a name goes through the llm module's resolver, "auto"
 * detects one from the environment. Returns undefined when no provider is
 * configured or it cannot be resolved.
 */
export function resolveEmbeddingTarget(config: MemoryConfig, llm: LlmService | undefined, log: Logger): EmbeddingTarget | undefined {
  const target = resolveConfigured(config, llm, log);
  // Memory text is sent there: say so once per resolution when it leaves this machine (the reference warns too).
  if (target && !isLoopbackUrl(target.baseUrl))
    log.warn({ base_url: target.baseUrl }, 'memory embeddings are computed by an external API: entry text leaves this machine');
  return target;
}

function resolveConfigured(config: MemoryConfig, llm: LlmService | undefined, log: Logger): EmbeddingTarget | undefined {
  let provider = config.embedding_provider.trim();
  if (provider === 'auto') {
    const detected = detectEmbeddingProvider();
    if (!detected) {
      log.info('embedding_provider = "auto" found no provider in the environment; memory search uses FTS5 only');
      return undefined;
    }
    log.info({ provider: detected.provider, from: detected.from }, 'embedding provider detected from the environment');
    provider = detected.provider;
  }
  if (!provider) return undefined;
  const envKey = config.embedding_api_key_env ? process.env[config.embedding_api_key_env] : undefined;
  if (/^https?:\/\//i.test(provider)) return { baseUrl: provider.replace(/\/+$/, ''), apiKey: envKey, model: config.embedding_model };
  if (!llm) {
    log.warn({ provider }, 'embedding_provider names a provider but the llm module is not loaded; memory search uses FTS5 only');
    return undefined;
  }
  try {
    const target = llm.resolve({ provider, model: config.embedding_model });
    return { baseUrl: target.baseUrl, apiKey: envKey ?? target.apiKey, model: config.embedding_model };
  } catch (err) {
    log.warn({ err, provider }, 'embedding provider cannot be resolved; memory search uses FTS5 only');
    return undefined;
  }
}

/** OpenAI-compatible /embeddings calls; keeps one client per endpoint and policy (a client holds its connection pool). */
export class Embedder {
  private readonly clients = new Map<string, OpenAI>();

  /** One call (the official client handles the wire format and retries). The SDK loads on first use. */
  async embed(target: EmbeddingTarget, inputs: string[], options: { timeoutMs: number; retries: number; signal?: AbortSignal }): Promise<Float32Array[]> {
    const client = await this.client(target, options.timeoutMs, options.retries);
    const res = await client.embeddings.create({ model: target.model, input: inputs, encoding_format: 'float' }, { signal: options.signal });
    const out = new Array<Float32Array>(inputs.length);
    for (const d of res.data) out[d.index] = Float32Array.from(d.embedding);
    if (out.some((v) => !v)) throw new Error('embedding response is missing vectors');
    return out;
  }

  private async client(target: EmbeddingTarget, timeoutMs: number, retries: number): Promise<OpenAI> {
    const key = JSON.stringify([target.baseUrl, target.apiKey ?? '', timeoutMs, retries]);
    let c = this.clients.get(key);
    if (!c) {
      const { default: OpenAIClient } = await import('openai');
      if (this.clients.size >= 16) this.clients.clear();
      c = new OpenAIClient({ baseURL: target.baseUrl, apiKey: target.apiKey || 'none', timeout: timeoutMs, maxRetries: retries });
      this.clients.set(key, c);
    }
    return c;
  }
}
