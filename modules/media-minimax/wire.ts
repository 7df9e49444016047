/**
 * MiniMax's API as the driver calls it: the catalogue's base URL (it includes `/v1`), `Authorization: Bearer`, and the
 * `base_resp` envelope, which carries MiniMax's errors on an HTTP 200 answer as often as not: every answer is checked.
 * Query parameters go through URLSearchParams, so an id with `&` or `#` in it cannot add parameters to a request that
 * carries the key.
 */
import type { MediaDriverKit, MediaError } from '@talon/media';

export const PROVIDER = 'minimax';
const CATALOGUE_BASE = 'https://api.minimax.io/v1';

export interface Envelope {
  base_resp?: { status_code?: number; status_msg?: string };
}

export interface CallOptions {
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
}

export interface MinimaxApi {
  post<T extends Envelope>(path: string, body: unknown, options: CallOptions): Promise<T>;
  postForm<T extends Envelope>(path: string, form: FormData, headers: Record<string, string>, options: CallOptions): Promise<T>;
  get<T extends Envelope>(path: string, query: Record<string, string>, options: CallOptions): Promise<T>;
}

/** MiniMax's status codes by what they mean for the caller; any other non-zero code is an outage. */
const RATE_LIMITED = new Set([1002, 1039, 1041, 2045]);
const REFUSED = new Set([1026, 1027, 1042, 2013]);
const BAD_KEY = new Set([1004, 2049]);

export function setupHint(kit: MediaDriverKit): string {
  const env = kit.provider(PROVIDER).envVar ?? 'MINIMAX_API_KEY';
  return `set ${env} (or POST /api/providers/${PROVIDER}/key) for MiniMax images, speech, music, video and transcription`;
}

/** The envelope's error as a MediaError, or undefined for success (status_code 0 or no envelope). */
export function envelopeError(kit: MediaDriverKit, answer: Envelope): MediaError | undefined {
  const code = answer.base_resp?.status_code ?? 0;
  if (code === 0) return undefined;
  const reason = `${answer.base_resp?.status_msg || 'no message'} (${code})`;
  const init = { provider: PROVIDER };
  if (RATE_LIMITED.has(code)) return kit.error('rate_limited', `provider '${PROVIDER}' is rate limiting: ${reason}`, init);
  if (REFUSED.has(code)) return kit.error('refused', `provider '${PROVIDER}' refused the request: ${reason}`, init);
  if (BAD_KEY.has(code)) return kit.error('not_configured', `provider '${PROVIDER}' refused the key (${code}): ${setupHint(kit)}`, init);
  return kit.error('outage', `provider '${PROVIDER}' failed: ${reason}`, init);
}

/** The API for one call, with the key read now (a key set through the API counts at once). */
export function minimaxApi(kit: MediaDriverKit): MinimaxApi {
  const access = kit.provider(PROVIDER);
  const key = access.apiKey;
  if (!key) throw kit.error('not_configured', `provider '${PROVIDER}' has no key: ${setupHint(kit)}`, { provider: PROVIDER });
  const base = (access.baseUrl ?? CATALOGUE_BASE).replace(/\/+$/, '');
  const auth = { authorization: `Bearer ${key}` };
  const call = async <T extends Envelope>(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string | FormData },
    options: CallOptions,
  ) => {
    const response = await kit.request({ provider: PROVIDER, url, ...init, headers: { ...auth, accept: 'application/json', ...init.headers }, ...options });
    const answer = response.json<T>();
    const error = envelopeError(kit, answer);
    if (error) throw error;
    return answer;
  };
  return {
    post: (path, body, options) =>
      call(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, options),
    postForm: (path, form, headers, options) => call(`${base}${path}`, { method: 'POST', headers, body: form }, options),
    get: (path, query, options) => call(`${base}${path}?${new URLSearchParams(query)}`, { method: 'GET', headers: {} }, options),
  };
}

/** Audio MiniMax sent as hex in the JSON. */
export function fromHex(kit: MediaDriverKit, hex: unknown, what: string): Buffer {
  if (typeof hex !== 'string' || hex === '' || hex.length % 2 !== 0 || !/^[0-9a-f]+$/i.test(hex))
    throw kit.error('outage', `provider '${PROVIDER}' answered ${what} without hex audio`, { provider: PROVIDER });
  return Buffer.from(hex, 'hex');
}
