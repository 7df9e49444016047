/**
 * ElevenLabs' key and base URL: the model catalogue's `elevenlabs` provider (env var, stored key, [provider_urls]),
 * read on each call. Before the catalogue knows the provider, its documented env var and base URL stand in.
 */
import type { MediaDriverKit, ProviderResponse } from '@talon/media';

export const PROVIDER = 'elevenlabs';
export const ELEVENLABS_BASE = 'https://api.elevenlabs.io/v1';
export const ELEVENLABS_ENV = 'ELEVENLABS_API_KEY';
/**
 * A backstop only: the media module bounds each call through its signal ([media] *_timeout_secs), and this must not
 * cut a call an operator allowed longer.
 */
const CALL_TIMEOUT_MS = 60 * 60_000;

interface Access {
  base: string;
  key?: string;
  envVar: string;
}

function access(kit: MediaDriverKit): Access {
  const found = kit.provider(PROVIDER);
  const envVar = found.envVar ?? ELEVENLABS_ENV;
  // Only when the catalogue has no entry (no envVar) is the env var read here; otherwise the catalogue decides.
  const key = found.apiKey || (found.envVar === undefined ? process.env[ELEVENLABS_ENV] : undefined) || undefined;
  return { base: (found.baseUrl || ELEVENLABS_BASE).replace(/\/+$/, ''), key, envVar };
}

export function elevenlabsConfigured(kit: MediaDriverKit): boolean {
  return access(kit).key !== undefined;
}

export function elevenlabsSetupHint(kit: MediaDriverKit): string {
  return `Set ${access(kit).envVar} (or POST /api/providers/elevenlabs/key).`;
}

export interface PostOptions {
  /** Path and query after the base URL, already encoded. */
  path: string;
  body: object | FormData;
  accept: string;
  maxBytes: number;
  signal: AbortSignal;
}

/** A POST with the `xi-api-key` header; the kit maps non-2xx answers to MediaErrors. */
export function postElevenlabs(kit: MediaDriverKit, options: PostOptions): Promise<ProviderResponse> {
  const { base, key, envVar } = access(kit);
  if (key === undefined)
    throw kit.error('not_configured', `ElevenLabs needs an API key: set ${envVar} or POST /api/providers/elevenlabs/key`, { provider: PROVIDER });
  const multipart = options.body instanceof FormData;
  const headers: Record<string, string> = { 'xi-api-key': key, accept: options.accept };
  if (!multipart) headers['content-type'] = 'application/json';
  return kit.request({
    provider: PROVIDER,
    url: `${base}${options.path}`,
    method: 'POST',
    headers,
    body: options.body instanceof FormData ? options.body : JSON.stringify(options.body),
    timeoutMs: CALL_TIMEOUT_MS,
    maxBytes: options.maxBytes,
    signal: options.signal,
  });
}
