/**
 * signal-cli's JSON-RPC over HTTP (`POST /api/v1/rpc`), through the context's net fetch (the configured daemon's
 * origin exempted from the private-address rule). The daemon itself has no authentication (it pins the Host header);
 * a configured token goes as a bearer token for a reverse proxy in front of it, in the header only. Every call names
 * the account, which a multi-account daemon needs and a single-account one checks. Errors map to ChannelError kinds:
 * HTTP 401/403 from a proxy is a refused token; JSON-RPC -5 (rate limit) waits the results' retryAfterSeconds;
 * -3 (I/O with Signal's servers) is transient; other errors (-1 user error, -4 untrusted identity, -32602) permanent.
 */
import type { AdapterContext, ChannelError } from '@talon/channels';
import { randomUUID } from 'node:crypto';

const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export type Json = Record<string, unknown>;

export function channelError(message: string, kind: ChannelError['kind'], retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

export const isAuthFailure = (err: unknown) => err instanceof Error && err.name === 'ChannelError' && (err as ChannelError).kind === 'auth';

export interface SignalRpc {
  call<T = Json>(method: string, params: Json, signal?: AbortSignal): Promise<T>;
}

export function signalRpc(ctx: AdapterContext, root: string, account: string, token: string | undefined): SignalRpc {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
  return {
    async call<T>(method: string, params: Json, signal?: AbortSignal): Promise<T> {
      const id = randomUUID();
      let res;
      try {
        res = await ctx.fetch({
          url: `${root}/api/v1/rpc`,
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, account } }),
          timeoutMs: 120_000,
          maxBytes: MAX_ANSWER_BYTES,
          maxRedirects: 0,
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        throw channelError(`signal-cli daemon unreachable: ${(err as Error).message}`, 'transient');
      }
      if (res.status === 401 || res.status === 403) throw channelError(`the signal-cli daemon (or its proxy) refused the token (HTTP ${res.status})`, 'auth');
      if (res.status !== 200)
        throw channelError(`signal-cli ${method}: HTTP ${res.status}`, res.status >= 500 || res.status === 429 ? 'transient' : 'permanent');
      const answer = JSON.parse(res.body.toString('utf8')) as { result?: T; error?: { code?: number; message?: string; data?: unknown } };
      if (!answer.error) return answer.result as T;
      const { code, message = 'error' } = answer.error;
      const text = `signal-cli ${method}: ${message} (${code})`;
      if (code === -5) return Promise.reject(channelError(text, 'rate_limited', retryAfter(answer.error.data)));
      if (code === -3 || code === -32603) throw channelError(text, 'transient');
      throw channelError(text, 'permanent');
    },
  };
}

/** The longest retryAfterSeconds among a failed send's results (`data.response.results`), in ms; 1 s when none. */
function retryAfter(data: unknown): number {
  const results = ((data as { response?: { results?: Array<{ retryAfterSeconds?: number }> } } | null)?.response?.results ?? []).map(
    (r) => r.retryAfterSeconds ?? 0,
  );
  const seconds = Math.max(0, ...results);
  return seconds > 0 ? seconds * 1000 : 1000;
}
