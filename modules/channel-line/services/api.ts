/**
 * The Messaging API calls the adapter makes, through the channel context's net fetch (LINE's SDK calls the global
 * fetch, which would bypass the net module's SSRF policy, so the few JSON calls are made here), and LINE's answers as
 * the channels module's ChannelError kinds: 429 waits, 401/403 stop the channel, other 4xx fail the chunk, 5xx and
 * network failures are retried. Messages never carry the token (it only travels in the Authorization header).
 */
import type { AdapterContext, ChannelError, ChannelKit } from '@talon/channels';

/** The net module's response, as the channel context's fetch gives it. */
type NetResponse = Awaited<ReturnType<AdapterContext['fetch']>>;

const TIMEOUT_MS = 15_000;

export function channelError(message: string, kind: ChannelError['kind'], retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

export interface LineApi {
  /** A JSON call; resolves with the response of a 2xx (or of a status listed in `accept`). */
  call(method: 'GET' | 'POST', url: string, body?: object, headers?: Record<string, string>, accept?: number[]): Promise<NetResponse>;
}

/** LINE's `{message}` of an error answer, for the reason shown. */
function messageOf(res: NetResponse): string {
  try {
    const m = (JSON.parse(res.body.toString('utf8')) as { message?: unknown }).message;
    return typeof m === 'string' ? m.slice(0, 300) : '';
  } catch {
    return '';
  }
}

export function statusError(res: NetResponse, kit: ChannelKit): ChannelError {
  const what = `LINE answered ${res.status}${messageOf(res) ? `: ${messageOf(res)}` : ''}`;
  const retryAfter = res.headers['retry-after'];
  // LINE sends no Retry-After with its 429; a second is what its rate limits (per second) need.
  if (res.status === 429)
    return channelError(what, 'rate_limited', kit.retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined, Date.now()) ?? 1000);
  if (res.status === 401 || res.status === 403) return channelError(`${what} (check the channel access token)`, 'auth');
  return channelError(what, res.status >= 400 && res.status < 500 ? 'permanent' : 'transient');
}

export function lineApi(ctx: AdapterContext, kit: () => ChannelKit, options: { maxBytes?: number } = {}): LineApi {
  const token = ctx.secrets.token ?? '';
  return {
    async call(method, url, body, headers = {}, accept = []) {
      const res = await ctx
        .fetch({
          url,
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
          ...(body ? { body: JSON.stringify(body) } : {}),
          timeoutMs: TIMEOUT_MS,
          maxBytes: options.maxBytes ?? 256 * 1024,
          signal: ctx.signal,
        })
        .catch((err: unknown) => {
          // net's refusal (SSRF rule, scheme) is the configuration's fault: retrying cannot help.
          if (err instanceof Error && err.name === 'FetchRefused') throw channelError(`LINE is refused: ${err.message}`, 'permanent');
          throw channelError(`LINE could not be reached: ${(err as Error).message}`, 'transient');
        });
      if ((res.status >= 200 && res.status < 300) || accept.includes(res.status)) return res;
      throw statusError(res, kit());
    },
  };
}
