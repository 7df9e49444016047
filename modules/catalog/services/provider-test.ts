/**
 * A real minimal request to a provider: its model listing, which needs a valid key and costs
 * nothing. The listing's shape depends on the wire format; formats not listed here cannot be tested.
 */
import { excerpt, probe, ProbeError } from './http-probe.ts';

interface Listing {
  url: string;
  headers: Record<string, string>;
}

interface ListingFormat {
  request(base: string, key?: string): Listing;
  /** Model ids out of the listing reply. */
  ids(body: unknown): string[];
}

/** Joins a path below the version segment the base URL may already carry. */
function below(base: string, version: string, rest: string): string {
  return new RegExp(`/${version}$`).test(base) ? `${base}/${rest}` : `${base}/${version}/${rest}`;
}

const strings = (values: unknown[]) => values.filter((v): v is string => typeof v === 'string');
const dataIds = (body: unknown) => strings(((body as { data?: Array<{ id?: unknown }> })?.data ?? []).map((m) => m?.id));
const modelNames = (body: unknown) => strings(((body as { models?: Array<{ name?: unknown }> })?.models ?? []).map((m) => m?.name));
const bearer = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

const FORMATS: Record<string, ListingFormat> = {
  openai: { request: (base, key) => ({ url: `${base}/models`, headers: bearer(key) }), ids: dataIds },
  anthropic: {
    request: (base, key) => ({ url: below(base, 'v1', 'models'), headers: { 'anthropic-version': '2023-06-01', ...(key ? { 'x-api-key': key } : {}) } }),
    ids: dataIds,
  },
  gemini: {
    request: (base, key) => ({ url: below(base, 'v1beta', 'models'), headers: key ? { 'x-goog-api-key': key } : ({} as Record<string, string>) }),
    ids: (body) => modelNames(body).map((id) => id.replace(/^models\//, '')),
  },
  ollama: { request: (base, key) => ({ url: `${base}/api/tags`, headers: bearer(key) }), ids: modelNames },
  // ElevenLabs has no chat models: its model list (a bare array) is still the free call that proves the key.
  elevenlabs: {
    request: (base, key) => ({ url: `${base}/models`, headers: key ? { 'xi-api-key': key } : ({} as Record<string, string>) }),
    ids: (body) => strings((Array.isArray(body) ? body : []).map((m: { model_id?: unknown } | null) => m?.model_id)),
  },
};

/** The wire formats whose model listing the connectivity test and the local runtime detection know. */
export const listableFormats = (): string[] => Object.keys(FORMATS);

/** How to list the models of a provider of this format; undefined for a format the test does not know. */
export function listing(format: string): ListingFormat | undefined {
  return Object.hasOwn(FORMATS, format) ? FORMATS[format] : undefined;
}

export interface TestOutcome {
  latency_ms: number;
  listed: string[];
}

export async function testProvider(format: ListingFormat, base: string, key: string | undefined, timeoutMs: number): Promise<TestOutcome> {
  const { url, headers } = format.request(base, key);
  const reply = await probe(url, { headers, timeoutMs, secret: key });
  if (reply.status === 401 || reply.status === 403)
    throw new ProbeError(`the provider rejected the API key (HTTP ${reply.status}): ${excerpt(reply.body, key)}`, reply.status);
  if (reply.status < 200 || reply.status >= 300) throw new ProbeError(`GET ${url} answered HTTP ${reply.status}: ${excerpt(reply.body, key)}`, reply.status);
  return { latency_ms: reply.latencyMs, listed: format.ids(reply.body) };
}
