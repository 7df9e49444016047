import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { LlmService } from '@talon/llm';
import type { MemoryConfig } from '../config.ts';

export interface EmbeddingTarget {
  baseUrl: string;
  apiKey?: string;
  model: string;
}

/**
 * Resolves [memory] embedding_provider to an OpenAI-compatible endpoint: a
 * URL is used as is, a name goes through the llm module's resolver. Returns
 * undefined when no provider is configured or it cannot be resolved.
 */
export function resolveEmbeddingTarget(config: MemoryConfig, llm: LlmService | undefined, log: Logger): EmbeddingTarget | undefined {
  const provider = config.embedding_provider.trim();
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
