/**
 * Google's HTTP calls through the channel context's net fetch (the SSRF rule; the configured URLs' origins are the
 * only private ones reachable), and Google's answers as the channels module's ChannelError kinds: 429 waits, 401/403
 * stop the channel, other 4xx fail the chunk, 5xx and network failures are retried. Messages never carry a credential.
 */
import type { AdapterContext, ChannelError, ChannelKit } from '@talon/channels';

/** The net module's response, as the channel context's fetch gives it. */
type NetResponse = Awaited<ReturnType<AdapterContext['fetch']>>;

const TIMEOUT_MS = 15_000;

export function channelError(message: string, kind: ChannelError['kind'], retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

/** Google's error text: `{error: {message}}` of its APIs, `{error, error_description}` of the token endpoint. */
function reasonOf(res: NetResponse): string {
  try {
    const body = JSON.parse(res.body.toString('utf8')) as { error?: unknown; error_description?: unknown };
    const e = body.error;
    const text =
      typeof e === 'object' && e !== null ? (e as { message?: unknown }).message : [e, body.error_description].filter((v) => typeof v === 'string').join(': ');
    return typeof text === 'string' ? text.slice(0, 300) : '';
  } catch {
    return '';
  }
}

export interface GoogleCall {
  what: string;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export async function googleFetch(ctx: AdapterContext, kit: () => ChannelKit, call: GoogleCall): Promise<NetResponse> {
  const res = await ctx
    .fetch({
      url: call.url,
      method: call.method,
      headers: call.headers ?? {},
      ...(call.body !== undefined ? { body: call.body } : {}),
      timeoutMs: TIMEOUT_MS,
      maxBytes: 512 * 1024,
      signal: ctx.signal,
    })
    .catch((err: unknown) => {
      if (err instanceof Error && err.name === 'FetchRefused') throw channelError(`${call.what} is refused: ${err.message}`, 'permanent');
      throw channelError(`${call.what} could not be reached: ${(err as Error).message}`, 'transient');
    });
  if (res.status >= 200 && res.status < 300) return res;
  const reason = reasonOf(res);
  const what = `${call.what} answered ${res.status}${reason ? `: ${reason}` : ''}`;
  const retryAfter = res.headers['retry-after'];
  if (res.status === 429)
    throw channelError(what, 'rate_limited', kit().retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined, Date.now()) ?? 1000);
  if (res.status === 401 || res.status === 403) throw channelError(what, 'auth');
  throw channelError(what, res.status >= 400 && res.status < 500 ? 'permanent' : 'transient');
}
