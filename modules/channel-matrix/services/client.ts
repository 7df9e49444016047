/**
 * The few client-server API calls the adapter makes, as JSON over the context's net fetch (the SSRF policy with the
 * configured homeserver's origin exempted). matrix-js-sdk is not used: it was measured far over the adapter's idle
 * memory budget (README.md), and these calls are plain JSON over HTTP. The access token goes in the Authorization
 * header only, never in a URL, so no error message or log line can carry it.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { MatrixError } from './errors.ts';

/** How long the homeserver may hold a sync open; the request's own timeout is longer. */
export const SYNC_TIMEOUT_MS = 30_000;
/** A JSON answer bigger than this is a broken or hostile server (a sync of a busy account stays well below). */
const MAX_JSON_BYTES = 32 * 1024 * 1024;

export type Json = Record<string, unknown>;

export interface MatrixClient {
  /** A JSON call under /_matrix/client/v3 (or another API root given in `path` from /_matrix). */
  call<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    options?: { timeoutMs?: number; signal?: AbortSignal; query?: Record<string, string> },
  ): Promise<T>;
  /** Uploads bytes, returning their mxc:// URI. */
  upload(data: Buffer, mediaType: string, name: string, signal?: AbortSignal): Promise<string>;
  /** Downloads an mxc:// URI (authenticated media), up to maxBytes; undefined when gone or too big. */
  download(mxc: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer | undefined>;
}

export const enc = encodeURIComponent;

export function matrixClient(ctx: AdapterContext, kit: ChannelKit, root: string, token: string): MatrixClient {
  const auth = { authorization: `Bearer ${token}` };

  async function request(
    method: string,
    url: string,
    body: string | Uint8Array | undefined,
    headers: Record<string, string>,
    timeoutMs: number,
    maxBytes: number,
    signal?: AbortSignal,
  ) {
    const res = await ctx.fetch({
      url,
      method,
      headers: { ...auth, ...headers },
      ...(body !== undefined ? { body } : {}),
      timeoutMs,
      maxBytes,
      maxRedirects: 0,
      ...(signal ? { signal } : {}),
    });
    if (res.status >= 200 && res.status < 300) return res;
    let parsed: Json = {};
    try {
      parsed = JSON.parse(res.body.toString('utf8')) as Json;
    } catch {
      // Not a Matrix error body (a proxy's page): the status says enough.
    }
    const header = res.headers['retry-after'];
    const retry = typeof parsed.retry_after_ms === 'number' ? parsed.retry_after_ms : kit.retryAfterMs(Array.isArray(header) ? header[0] : header, Date.now());
    throw new MatrixError(
      res.status,
      typeof parsed.errcode === 'string' ? parsed.errcode : 'M_UNKNOWN',
      typeof parsed.error === 'string' ? parsed.error : res.statusText,
      retry,
    );
  }

  return {
    async call<T>(method: string, path: string, body?: unknown, options: { timeoutMs?: number; signal?: AbortSignal; query?: Record<string, string> } = {}) {
      const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
      const url = `${root}${path.startsWith('/_matrix/') ? '' : '/_matrix/client/v3'}${path}${query}`;
      const json = body === undefined ? undefined : JSON.stringify(body);
      const res = await request(
        method,
        url,
        json,
        json === undefined ? {} : { 'content-type': 'application/json' },
        options.timeoutMs ?? 30_000,
        MAX_JSON_BYTES,
        options.signal,
      );
      return JSON.parse(res.body.toString('utf8') || '{}') as T;
    },
    async upload(data, mediaType, name, signal) {
      const url = `${root}/_matrix/media/v3/upload?${new URLSearchParams({ filename: name }).toString()}`;
      const res = await request('POST', url, data, { 'content-type': mediaType }, 120_000, 64 * 1024, signal);
      const uri = (JSON.parse(res.body.toString('utf8')) as Json).content_uri;
      if (typeof uri !== 'string' || !uri.startsWith('mxc://')) throw new MatrixError(502, 'M_UNKNOWN', 'the upload answered no content_uri');
      return uri;
    },
    async download(mxc, maxBytes, signal) {
      const m = /^mxc:\/\/([^/]+)\/([^/?#]+)$/.exec(mxc);
      if (!m) return undefined;
      // Authenticated media (spec v1.11): the unauthenticated /media/v3/download is frozen on current homeservers.
      const url = `${root}/_matrix/client/v1/media/download/${enc(m[1]!)}/${enc(m[2]!)}`;
      try {
        const res = await request('GET', url, undefined, {}, 60_000, maxBytes, signal);
        return res.truncated ? undefined : res.body;
      } catch (err) {
        // A 4xx (gone, too large, forbidden) will not change on redelivery; anything else comes again.
        if (err instanceof MatrixError && err.status >= 400 && err.status < 500 && err.status !== 429) return undefined;
        throw err;
      }
    },
  };
}
