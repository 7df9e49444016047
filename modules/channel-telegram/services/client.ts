/**
 * grammY's Api over the channels context's fetch (the net module: SSRF rule, size and time caps), so no Bot API call
 * opens a socket of its own. grammY hands its fetch a JSON string or, for uploads, a multipart stream; the stream is
 * read into bytes because net sends a body whole.
 */
import { Api } from 'grammy';
import type { AdapterContext } from '@talon/channels';

/** Seconds a getUpdates long poll waits on the server. */
export const POLL_SECONDS = 25;
/** Per request, above the long poll so an idle poll is never cut off by the cap. */
const REQUEST_TIMEOUT_MS = (POLL_SECONDS + 20) * 1000;
/** Bot API answers are far smaller than this (file downloads have their own cap, MAX_MEDIA_BYTES in inbound.ts). */
export const MAX_BYTES = 21 * 1024 * 1024;

/** grammY's Node typings name the abort-controller polyfill's AbortSignal; at run time it takes the global one. */
export type ApiSignal = NonNullable<Parameters<Api['getMe']>[0]>;
export const apiSignal = (signal: AbortSignal): ApiSignal => signal as unknown as ApiSignal;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function telegramApi(ctx: AdapterContext, token: string, apiRoot: string): Api {
  return new Api(token, { apiRoot, fetch: netFetchFor(ctx) as never, timeoutSeconds: REQUEST_TIMEOUT_MS / 1000 });
}

/** A WHATWG-shaped fetch over ctx.fetch (only what grammY uses: url, method, headers, body, signal). */
function netFetchFor(ctx: AdapterContext): Fetch {
  return async (input, init = {}) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of new Headers(init.headers as HeadersInit | undefined)) {
      if (name !== 'connection') headers[name] = value;
    }
    const res = await ctx.fetch({
      url: String(input instanceof Request ? input.url : input),
      method: init.method ?? 'GET',
      headers,
      body: await bodyBytes(init.body),
      timeoutMs: REQUEST_TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      maxRedirects: 0,
      ...(init.signal ? { signal: init.signal } : {}),
    });
    const flat = new Headers();
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) flat.set(name, Array.isArray(value) ? value.join(', ') : value);
    return new Response(res.body.length ? new Uint8Array(res.body) : null, { status: res.status, statusText: res.statusText, headers: flat });
  };
}

/** A string as is; grammY's multipart body (a Node stream of byte chunks) collected. */
async function bodyBytes(body: unknown): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (typeof body === 'object' && Symbol.asyncIterator in body) {
    const parts: Buffer[] = [];
    for await (const part of body as AsyncIterable<Uint8Array | string>) parts.push(Buffer.from(part));
    return Buffer.concat(parts);
  }
  throw new TypeError('unsupported request body');
}
