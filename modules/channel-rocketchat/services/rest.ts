/**
 * The REST calls the adapter makes (/api/v1), as JSON over the context's net fetch (the SSRF policy with the
 * configured server's origin exempted), authenticated by the X-User-Id and X-Auth-Token headers (never in a URL).
 * @rocket.chat/sdk is not used: it is unmaintained, calls the global fetch (bypassing the net module) and these are a
 * handful of JSON calls.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { RocketChatError } from './errors.ts';

export type Json = Record<string, unknown>;

const MAX_JSON_BYTES = 16 * 1024 * 1024;

export interface RocketChatRest {
  call<T = Json>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ data: T; date?: number }>;
}

export function rocketchatRest(ctx: AdapterContext, kit: ChannelKit, root: string, userId: string, token: string): RocketChatRest {
  return {
    async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal) {
      const json = body === undefined ? undefined : JSON.stringify(body);
      const res = await ctx.fetch({
        url: `${root}/api/v1${path}`,
        method,
        headers: { 'x-user-id': userId, 'x-auth-token': token, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(json !== undefined ? { body: json } : {}),
        timeoutMs: 30_000,
        maxBytes: MAX_JSON_BYTES,
        maxRedirects: 0,
        ...(signal ? { signal } : {}),
      });
      let parsed: Json = {};
      try {
        parsed = JSON.parse(res.body.toString('utf8') || '{}') as Json;
      } catch {
        // Not a JSON body (a proxy's page): the status says enough.
      }
      if (res.status < 200 || res.status >= 300 || parsed.success === false) {
        const header = (name: string) => {
          const v = res.headers[name];
          return Array.isArray(v) ? v[0] : v;
        };
        // X-RateLimit-Reset is the epoch milliseconds when the endpoint's window ends.
        const reset = Number(header('x-ratelimit-reset'));
        const retry = kit.retryAfterMs(header('retry-after'), Date.now()) ?? (reset > 0 ? Math.max(0, reset - Date.now()) : undefined);
        const message = typeof parsed.error === 'string' ? parsed.error : typeof parsed.message === 'string' ? parsed.message : res.statusText;
        throw new RocketChatError(res.status >= 300 ? res.status : 400, typeof parsed.errorType === 'string' ? parsed.errorType : 'error', message, retry);
      }
      const date = Date.parse(String(res.headers.date ?? ''));
      return { data: parsed as T, ...(Number.isNaN(date) ? {} : { date }) };
    },
  };
}
