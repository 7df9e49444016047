/**
 * The REST v4 calls the adapter makes, as JSON over the context's net fetch (the SSRF policy with the configured
 * server's origin exempted). @mattermost/client is not used: its Client4 calls the global fetch, which would bypass
 * the net module, and these are a handful of plain JSON calls. The token goes in the Authorization header only.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { MattermostError } from './errors.ts';

export type Json = Record<string, unknown>;

/** A JSON answer bigger than this is a broken or hostile server (a page of 200 posts stays far below). */
const MAX_JSON_BYTES = 16 * 1024 * 1024;

export interface MattermostRest {
  call<T = Json>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ data: T; date?: number }>;
  /** POST /files: the bytes as a multipart upload into the channel; answers the file id. */
  upload(channelId: string, name: string, mediaType: string, data: Buffer, signal?: AbortSignal): Promise<string>;
  /** GET /files/{id}, up to maxBytes; undefined when gone or too big. */
  download(fileId: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer | undefined>;
}

export function mattermostRest(ctx: AdapterContext, kit: ChannelKit, root: string, token: string): MattermostRest {
  async function request(
    method: string,
    path: string,
    body: string | Uint8Array | undefined,
    type: string | undefined,
    maxBytes: number,
    signal?: AbortSignal,
  ) {
    const res = await ctx.fetch({
      url: `${root}/api/v4${path}`,
      method,
      headers: { authorization: `Bearer ${token}`, 'x-requested-with': 'XMLHttpRequest', ...(type ? { 'content-type': type } : {}) },
      ...(body !== undefined ? { body } : {}),
      timeoutMs: typeof body === 'string' || body === undefined ? 30_000 : 120_000,
      maxBytes,
      maxRedirects: 0,
      ...(signal ? { signal } : {}),
    });
    if (res.status >= 200 && res.status < 300) return res;
    let parsed: Json = {};
    try {
      parsed = JSON.parse(res.body.toString('utf8')) as Json;
    } catch {
      // Not a Mattermost error body (a proxy's page): the status says enough.
    }
    const header = (name: string) => {
      const v = res.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    // Retry-After first; X-Ratelimit-Reset is the seconds left in the limiter's window.
    const retry = kit.retryAfterMs(header('retry-after'), Date.now()) ?? kit.retryAfterMs(header('x-ratelimit-reset'), Date.now());
    throw new MattermostError(
      res.status,
      typeof parsed.id === 'string' ? parsed.id : 'error',
      typeof parsed.message === 'string' ? parsed.message : res.statusText,
      retry,
    );
  }

  return {
    async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal) {
      const json = body === undefined ? undefined : JSON.stringify(body);
      const res = await request(method, path, json, json === undefined ? undefined : 'application/json', MAX_JSON_BYTES, signal);
      const date = Date.parse(String(res.headers.date ?? ''));
      return { data: JSON.parse(res.body.toString('utf8') || '{}') as T, ...(Number.isNaN(date) ? {} : { date }) };
    },
    async upload(channelId, name, mediaType, data, signal) {
      const form = new FormData();
      form.append('channel_id', channelId);
      form.append('files', new Blob([new Uint8Array(data)], { type: mediaType }), name);
      // The platform's own encoder makes the multipart body and its boundary; net sends the bytes as given.
      const encoded = new Response(form);
      const bytes = new Uint8Array(await encoded.arrayBuffer());
      const res = await request('POST', '/files', bytes, encoded.headers.get('content-type')!, 1024 * 1024, signal);
      const id = ((JSON.parse(res.body.toString('utf8')) as { file_infos?: Array<{ id?: string }> }).file_infos ?? [])[0]?.id;
      if (!id) throw new MattermostError(502, 'error', 'the upload answered no file id');
      return id;
    },
    async download(fileId, maxBytes, signal) {
      try {
        const res = await request('GET', `/files/${encodeURIComponent(fileId)}`, undefined, undefined, maxBytes, signal);
        return res.truncated ? undefined : res.body;
      } catch (err) {
        // A 4xx (gone, forbidden) will not change on redelivery; anything else comes again.
        if (err instanceof MattermostError && err.status >= 400 && err.status < 500 && err.status !== 429) return undefined;
        throw err;
      }
    },
  };
}
