/**
 * @discordjs/rest's requests sent through the channel's net fetch (the SSRF policy, with the configured `api_url`'s
 * origin exempted so a loopback server is reachable only when configured), answered as the Response the library reads.
 */
import type { ResponseLike, RESTOptions } from '@discordjs/rest';
import type { AdapterContext } from '@talon/channels';
import { channelError } from './errors.ts';

const TIMEOUT_MS = 15_000;
/** An upload (a file of up to the channels module's 20 MB) may take longer than a JSON call. */
const UPLOAD_TIMEOUT_MS = 120_000;
/** Discord's JSON answers are small; a message object with embeds stays far below this. */
const MAX_BYTES = 4 * 1024 * 1024;
/** Statuses whose Response may not carry a body. */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * The library's body as net's: JSON text, or an upload's FormData encoded as multipart/form-data (files[n] and
 * payload_json, by the platform's own encoder) with its boundary in the content-type.
 */
async function encodeBody(body: unknown, headers: Record<string, string>): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null || typeof body === 'string') return body ?? undefined;
  if (!(body instanceof FormData)) throw channelError('permanent', 'the Discord adapter sends JSON or multipart bodies only');
  const encoded = new Response(body);
  headers['content-type'] = encoded.headers.get('content-type')!;
  return new Uint8Array(await encoded.arrayBuffer());
}

export function netRequest(ctx: Pick<AdapterContext, 'fetch'>): RESTOptions['makeRequest'] {
  return async (url, init) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers as HeadersInit | undefined).forEach((value, key) => (headers[key] = value));
    const body = await encodeBody(init.body, headers);
    const res = await ctx.fetch({
      url,
      method: init.method ?? 'GET',
      headers,
      ...(body !== undefined ? { body } : {}),
      timeoutMs: typeof body === 'string' || body === undefined ? TIMEOUT_MS : UPLOAD_TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      maxRedirects: 0,
      ...(init.signal ? { signal: init.signal as AbortSignal } : {}),
    });
    const out = new Headers();
    for (const [key, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.append(key, v);
    }
    const response = new Response(NO_BODY.has(res.status) ? null : new Uint8Array(res.body), { status: res.status, statusText: res.statusText, headers: out });
    // A WHATWG Response is what the library reads; its types name node:stream/web's ReadableStream, the DOM lib's differs.
    return response as unknown as ResponseLike;
  };
}
