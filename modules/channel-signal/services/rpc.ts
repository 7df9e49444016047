/**
 * signal-cli's JSON-RPC over HTTP (`POST /api/v1/rpc`), through the context's net fetch (the configured daemon's
 * origin exempted from the private-address rule). The daemon itself has no authentication (it pins the Host header);
 * a configured token goes as a bearer token for a reverse proxy in front of it, in the header only. Every call names
 * the account, which a multi-account daemon needs and a single-account one checks. Errors map to ChannelError kinds:
 * HTTP 401/403 from a proxy is a refused token; JSON-RPC -5 (rate limit) waits the results' retryAfterSeconds;
 * -3 (I/O with Signal's servers) is transient; other errors (-1 user error, -4 untrusted identity, -32602) permanent.
 * A 200 whose body is no JSON-RPC answer is transient, named by its content type and first bytes.
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
      const answer = jsonRpcAnswer<T>(res.body);
      if (!answer) throw unexpectedAnswer(`signal-cli ${method}`, res.headers['content-type'], res.body, token);
      if (!answer.error) return answer.result as T;
      const { code, message = 'error' } = answer.error;
      const text = `signal-cli ${method}: ${message} (${code})`;
      if (code === -5) return Promise.reject(channelError(text, 'rate_limited', retryAfter(answer.error.data)));
      if (code === -3 || code === -32603) throw channelError(text, 'transient');
      throw channelError(text, 'permanent');
    },
  };
}

type Answer<T> = { result?: T; error?: { code?: number; message?: string; data?: unknown } };

/** The body as a JSON-RPC answer (an object with `result` or `error`); undefined when it is none. */
function jsonRpcAnswer<T>(body: Buffer): Answer<T> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  return value && typeof value === 'object' && ('result' in value || 'error' in value) ? (value as Answer<T>) : undefined;
}

/**
 * A 200 that is not the daemon speaking (a proxy's login page, another service on the port) as a transient error
 * naming what came back, its content type and first bytes, for last_error; retried with backoff like any failure.
 * The token is cut out should the answer echo it.
 */
export function unexpectedAnswer(what: string, contentType: string | string[] | undefined, body: Uint8Array, token: string | undefined): ChannelError {
  const type = (Array.isArray(contentType) ? contentType[0] : contentType) || 'none';
  let text = Buffer.from(body.subarray(0, 512)).toString('utf8');
  if (token) text = text.split(token).join('…');
  text = text
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, 80);
  return channelError(
    `${what}: HTTP 200 but not what the daemon answers (content-type ${type}; it begins ${text ? JSON.stringify(text) : '(empty)'})`,
    'transient',
  );
}

/** The longest retryAfterSeconds among a failed send's results (`data.response.results`), in ms; 1 s when none. */
function retryAfter(data: unknown): number {
  const results = ((data as { response?: { results?: Array<{ retryAfterSeconds?: number }> } } | null)?.response?.results ?? []).map(
    (r) => r.retryAfterSeconds ?? 0,
  );
  const seconds = Math.max(0, ...results);
  return seconds > 0 ? seconds * 1000 : 1000;
}
