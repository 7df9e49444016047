/**
 * The Gemini API as the driver calls it: the API root derived from the catalogue's base URL (which may or may not
 * end in a version), the key in the `x-goog-api-key` header (never `?key=` in a URL that may be logged), JSON both
 * ways through the kit, which maps the HTTP status to a MediaError.
 */
import type { MediaDriverKit } from '@talon/media';

export const PROVIDER = 'gemini';
const CATALOGUE_ROOT = 'https://generativelanguage.googleapis.com';

export interface CallOptions {
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
}

export interface GeminiApi {
  /** The header a download from the API's own origin needs (Veo's file URIs); the kit sends it nowhere else. */
  credentials: Record<string, string>;
  post<T>(path: string, body: unknown, options: CallOptions): Promise<T>;
  get<T>(path: string, options: CallOptions): Promise<T>;
}

export function setupHint(kit: MediaDriverKit): string {
  const env = kit.provider(PROVIDER).envVar ?? 'GEMINI_API_KEY';
  return `set ${env} (or POST /api/providers/${PROVIDER}/key) for Gemini image and Veo video generation`;
}

/** The API for one call, with the key read now (a key set through the API counts at once). */
export function geminiApi(kit: MediaDriverKit): GeminiApi {
  const access = kit.provider(PROVIDER);
  const key = access.apiKey;
  if (!key) throw kit.error('not_configured', `provider '${PROVIDER}' has no key: ${setupHint(kit)}`, { provider: PROVIDER });
  // The SDKs append /v1beta/...; a base URL that already ends in a version would double it.
  const root = (access.baseUrl ?? CATALOGUE_ROOT).replace(/\/+$/, '').replace(/\/v1(beta)?$/, '');
  const credentials = { 'x-goog-api-key': key };
  const call = async <T>(method: string, path: string, body: unknown, options: CallOptions): Promise<T> => {
    const headers: Record<string, string> = { ...credentials, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await kit.request({
        provider: PROVIDER,
        url: `${root}${path}`,
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        ...options,
      });
      return response.json<T>();
    } catch (err) {
      throw keyError(kit, err);
    }
  };
  return {
    credentials,
    post: (path, body, options) => call('POST', path, body, options),
    get: (path, options) => call('GET', path, undefined, options),
  };
}

/** Google answers a wrong key with 400 INVALID_ARGUMENT (API_KEY_INVALID): that is a key to fix (422), not a refused prompt. */
function keyError(kit: MediaDriverKit, err: unknown): unknown {
  if (kit.isMediaError(err) && err.kind === 'refused' && /API key not valid|API_KEY_INVALID/i.test(err.message))
    return kit.error('not_configured', `provider '${PROVIDER}' refused the key: ${setupHint(kit)}`, { provider: PROVIDER, status: err.status });
  return err;
}

/** The closest of `allowed` ('16:9'...) to width:height, or undefined when either is missing. */
export function aspectRatio(width: number | undefined, height: number | undefined, allowed: readonly string[]): string | undefined {
  if (!width || !height) return undefined;
  const distance = (ratio: string) => {
    const [w, h] = ratio.split(':').map(Number);
    return Math.abs(Math.log(w / h) - Math.log(width / height));
  };
  return allowed.reduce((best, r) => (distance(r) < distance(best) ? r : best));
}
