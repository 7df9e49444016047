/**
 * The few REST calls the adapter makes, over the context's net fetch (the SSRF policy with the configured server's
 * origin exempted). Zulip takes form-encoded parameters (JSON values as JSON text) and answers JSON; the bot's email and
 * API key go as HTTP basic auth in the Authorization header only, never in a URL, so no error or log line carries them.
 * No Zulip client library: zulip-js is unmaintained, makes its own requests, and these calls are plain HTTP.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { ZulipError } from './errors.ts';

/** A JSON answer bigger than this is a broken or hostile server (a batch of events stays well below). */
const MAX_JSON_BYTES = 16 * 1024 * 1024;

export type Json = Record<string, unknown>;
export type Params = Record<string, string | number | boolean | unknown[] | Json>;

export interface ZulipClient {
  /** A call under /api/v1; GET parameters go in the query, others form-encoded in the body. */
  call<T = Json>(method: string, path: string, params?: Params, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<T>;
  /** Uploads a file (POST /user_uploads), returning its server-relative /user_uploads/… path. */
  upload(data: Buffer, mediaType: string, name: string, signal?: AbortSignal): Promise<string>;
  /** Downloads a /user_uploads/… path with the bot's credentials, up to maxBytes; undefined when gone or too big. */
  download(path: string, maxBytes: number, signal?: AbortSignal): Promise<{ data: Buffer; mediaType?: string } | undefined>;
}

const encode = (params: Params) =>
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v)]));

export function zulipClient(ctx: AdapterContext, kit: ChannelKit, root: string, email: string, apiKey: string): ZulipClient {
  const auth = { authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}` };

  async function request(
    method: string,
    url: string,
    body: string | Uint8Array | undefined,
    headers: Record<string, string>,
    timeoutMs: number,
    maxBytes: number,
    signal?: AbortSignal,
    maxRedirects = 0,
  ) {
    const res = await ctx.fetch({
      url,
      method,
      headers: { ...auth, ...headers },
      ...(body !== undefined ? { body } : {}),
      timeoutMs,
      maxBytes,
      maxRedirects,
      ...(signal ? { signal } : {}),
    });
    if (res.status >= 200 && res.status < 300) return res;
    let parsed: Json = {};
    try {
      parsed = JSON.parse(res.body.toString('utf8')) as Json;
    } catch {
      // Not Zulip's JSON error (a proxy's page): the status says enough.
    }
    const header = res.headers['retry-after'];
    const inBody = parsed['retry-after'];
    const retry = typeof inBody === 'number' ? Math.ceil(inBody * 1000) : kit.retryAfterMs(Array.isArray(header) ? header[0] : header, Date.now());
    throw new ZulipError(
      res.status,
      typeof parsed.code === 'string' ? parsed.code : 'BAD_REQUEST',
      typeof parsed.msg === 'string' ? parsed.msg : res.statusText,
      retry,
    );
  }

  const call = async <T>(method: string, path: string, params: Params = {}, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> => {
    const form = encode(params).toString();
    const get = method === 'GET';
    const res = await request(
      method,
      `${root}/api/v1${path}${get && form ? `?${form}` : ''}`,
      get ? undefined : form,
      get ? {} : { 'content-type': 'application/x-www-form-urlencoded' },
      options.timeoutMs ?? 30_000,
      MAX_JSON_BYTES,
      options.signal,
    );
    return JSON.parse(res.body.toString('utf8') || '{}') as T;
  };

  return {
    call,
    async upload(data, mediaType, name, signal) {
      // The multipart body is made by the platform's own FormData encoder, then sent as bytes through net's fetch.
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(data)], { type: mediaType }), name);
      const encoded = new Request('http://multipart.invalid/', { method: 'POST', body: form });
      const bytes = new Uint8Array(await encoded.arrayBuffer());
      const res = await request(
        'POST',
        `${root}/api/v1/user_uploads`,
        bytes,
        { 'content-type': encoded.headers.get('content-type')! },
        120_000,
        64 * 1024,
        signal,
      );
      const answer = JSON.parse(res.body.toString('utf8')) as Json;
      // `url` since Zulip 9; `uri` before (and still sent).
      const uri = typeof answer.url === 'string' ? answer.url : answer.uri;
      if (typeof uri !== 'string' || !uri.startsWith('/user_uploads/')) throw new ZulipError(502, 'BAD_UPLOAD', 'the upload answered no /user_uploads/ path');
      return uri;
    },
    async download(path, maxBytes, signal) {
      try {
        // The API's way to a file: a temporary URL for it (Zulip 4+), served without credentials (possibly redirected
        // to the server's object store, each hop checked by net).
        const temp = await call<{ url?: string }>('GET', path, {}, { signal });
        if (typeof temp.url !== 'string' || !temp.url.startsWith('/')) return undefined;
        const res = await request('GET', `${root}${temp.url}`, undefined, {}, 60_000, maxBytes, signal, 3);
        const type = res.headers['content-type'];
        return res.truncated ? undefined : { data: res.body, ...(typeof type === 'string' ? { mediaType: type.split(';')[0]!.trim() } : {}) };
      } catch (err) {
        // A 4xx (gone, forbidden) will not change on redelivery; anything else comes again.
        if (err instanceof ZulipError && err.status >= 400 && err.status < 500 && err.status !== 429) return undefined;
        throw err;
      }
    },
  };
}
