/**
 * A real minimal request to a provider: its model listing, which needs a
 * valid key and costs nothing. One request shape per API format.
 */
import type { ApiFormat } from '../../llm/api.ts';
import { excerpt, probe, ProbeError } from './http-probe.ts';

interface Listing {
  url: string;
  headers: Record<string, string>;
}

/** Joins a path below the version segment the base URL may already carry. */
function below(base: string, version: string, rest: string): string {
  return new RegExp(`/${version}$`).test(base) ? `${base}/${rest}` : `${base}/${version}/${rest}`;
}

export function listingRequest(format: ApiFormat, base: string, key?: string): Listing {
  switch (format) {
    case 'anthropic':
      return { url: below(base, 'v1', 'models'), headers: { 'anthropic-version': '2023-06-01', ...(key ? { 'x-api-key': key } : {}) } };
    case 'gemini':
      return { url: below(base, 'v1beta', 'models'), headers: key ? { 'x-goog-api-key': key } : {} };
    case 'ollama':
      return { url: `${base}/api/tags`, headers: key ? { authorization: `Bearer ${key}` } : {} };
    case 'openai':
      return { url: `${base}/models`, headers: key ? { authorization: `Bearer ${key}` } : {} };
  }
}

/** Model ids out of a listing reply (OpenAI/Anthropic `data[].id`, Gemini `models[].name`, Ollama `models[].name`). */
export function listedModels(format: ApiFormat, body: unknown): string[] {
  const b = (body ?? {}) as { data?: Array<{ id?: unknown }>; models?: Array<{ name?: unknown }> };
  const ids = format === 'gemini' || format === 'ollama' ? (b.models ?? []).map((m) => m?.name) : (b.data ?? []).map((m) => m?.id);
  return ids.filter((id): id is string => typeof id === 'string').map((id) => (format === 'gemini' ? id.replace(/^models\//, '') : id));
}

export interface TestOutcome {
  latency_ms: number;
  listed: string[];
}

export async function testProvider(format: ApiFormat, base: string, key: string | undefined, timeoutMs: number): Promise<TestOutcome> {
  const { url, headers } = listingRequest(format, base, key);
  const reply = await probe(url, { headers, timeoutMs, secret: key });
  if (reply.status === 401 || reply.status === 403)
    throw new ProbeError(`the provider rejected the API key (HTTP ${reply.status}): ${excerpt(reply.body, key)}`, reply.status);
  if (reply.status < 200 || reply.status >= 300) throw new ProbeError(`GET ${url} answered HTTP ${reply.status}: ${excerpt(reply.body, key)}`, reply.status);
  return { latency_ms: reply.latencyMs, listed: listedModels(format, reply.body) };
}
