/**
 * Where the OpenAI calls go and how they authenticate: the model catalogue's key and base URL for `openai`, read on
 * each call so a key set through POST /api/providers/openai/key counts at once. Any OpenAI-compatible server (Groq,
 * Together, a self-hosted one) is reached by setting `[provider_urls] openai`; with `[media_openai] keyless = true`
 * such a server counts as configured without a key and gets no Authorization header. OpenAI's own API always
 * needs a key.
 */
import type { MediaDriverKit, ProviderResponse } from '@talon/media';

export const PROVIDER = 'openai';
export const OPENAI_BASE = 'https://api.openai.com/v1';
const DEFAULT_ENV = 'OPENAI_API_KEY';
/**
 * A backstop only: the media module bounds each call through its signal ([media] *_timeout_secs), and this must not
 * cut a call an operator allowed longer.
 */
export const CALL_TIMEOUT_MS = 60 * 60_000;

export interface OpenaiAccess {
  base: string;
  key?: string;
  envVar: string;
  /** The server takes no key (keyless, and not OpenAI's own API). */
  keyless: boolean;
}

/** OpenAI's own API (it always wants a key), as opposed to a compatible server at another address. */
function isOpenaiApi(base: string): boolean {
  try {
    return new URL(base).hostname.toLowerCase() === 'api.openai.com';
  } catch {
    return false;
  }
}

export function openaiAccess(kit: MediaDriverKit, keyless: boolean): OpenaiAccess {
  const found = kit.provider(PROVIDER);
  const base = (found.baseUrl || OPENAI_BASE).replace(/\/+$/, '');
  return { base, key: found.apiKey || undefined, envVar: found.envVar ?? DEFAULT_ENV, keyless: keyless && !isOpenaiApi(base) };
}

export function setupHint(access: OpenaiAccess): string {
  return (
    `Set ${access.envVar} (or POST /api/providers/openai/key). For an OpenAI-compatible server (Groq, Together, self-hosted) ` +
    'set [provider_urls] openai = "<its base URL, ending in /v1>", and [media_openai] keyless = true if it takes no key.'
  );
}

export interface PostOptions {
  maxBytes: number;
  signal: AbortSignal;
  accept?: string;
}

/** A POST to `{base}{path}` with a JSON or multipart body; the kit maps non-2xx answers to MediaErrors. */
export function postOpenai(kit: MediaDriverKit, access: OpenaiAccess, path: string, body: object | FormData, options: PostOptions): Promise<ProviderResponse> {
  if (access.key === undefined && !access.keyless)
    throw kit.error('not_configured', `OpenAI needs an API key: set ${access.envVar} or POST /api/providers/openai/key`, { provider: PROVIDER });
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
  if (access.key !== undefined) headers.authorization = `Bearer ${access.key}`;
  const multipart = body instanceof FormData;
  // fetch sets the multipart boundary itself; only JSON needs its content type named.
  if (!multipart) headers['content-type'] = 'application/json';
  return kit.request({
    provider: PROVIDER,
    url: `${access.base}${path}`,
    method: 'POST',
    headers,
    body: multipart ? body : JSON.stringify(body),
    timeoutMs: CALL_TIMEOUT_MS,
    maxBytes: options.maxBytes,
    signal: options.signal,
  });
}
