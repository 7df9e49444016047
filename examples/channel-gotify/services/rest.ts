/**
 * Gotify's REST API (gotify.net/api-docs) through the channel context's net fetch: the configured server's origin is
 * the one private address it may reach. Tokens travel in the X-Gotify-Key header, never in a URL (URLs end up in logs).
 */
import type { AdapterContext, ChannelError, ChannelKit } from '@talon/channels';

/** A message as Gotify stores it and streams it. */
export interface GotifyMessage {
  id: number;
  appid: number;
  message: string;
  title?: string;
  priority?: number;
  date: string;
  extras?: Record<string, unknown>;
}

export interface GotifyApplication {
  id: number;
  token: string;
  name: string;
}

const TIMEOUT_MS = 15_000;

export function channelError(message: string, kind: ChannelError['kind'], retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

/** Gotify's own error body: {error, errorCode, errorDescription}. */
function described(body: Buffer): string {
  try {
    const e = JSON.parse(body.toString('utf8')) as { error?: string; errorDescription?: string };
    return [e.error, e.errorDescription].filter(Boolean).join(': ');
  } catch {
    return '';
  }
}

export class GotifyRest {
  constructor(
    private readonly ctx: AdapterContext,
    private readonly kit: ChannelKit,
    readonly root: string,
  ) {}

  private async call<T>(method: string, path: string, token: string, body?: object): Promise<T> {
    const res = await this.ctx
      .fetch({
        url: this.root + path,
        method,
        headers: { 'x-gotify-key': token, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        timeoutMs: TIMEOUT_MS,
        maxBytes: 4 * 1024 * 1024,
        signal: this.ctx.signal,
      })
      .catch((err: unknown) => {
        throw channelError(`gotify could not be reached: ${(err as Error).message}`, 'transient');
      });
    if (res.status >= 200 && res.status < 300) return JSON.parse(res.body.toString('utf8')) as T;
    const what = `gotify answered ${res.status} to ${method} ${path.split('?')[0]}${described(res.body) ? ` (${described(res.body)})` : ''}`;
    // Gotify itself has no rate limit; a proxy in front of it may answer 429 with Retry-After.
    if (res.status === 429) {
      const retry = res.headers['retry-after'];
      throw channelError(what, 'rate_limited', this.kit.retryAfterMs(typeof retry === 'string' ? retry : undefined, Date.now()) ?? 1000);
    }
    if (res.status === 401 || res.status === 403) throw channelError(what, 'auth');
    throw channelError(what, res.status >= 400 && res.status < 500 ? 'permanent' : 'transient');
  }

  /** The user's applications (client token): checks the token and finds the application replies are posted as. */
  applications(clientToken: string): Promise<GotifyApplication[]> {
    return this.call('GET', '/application', clientToken);
  }

  /** The user's newest messages, newest first (client token); with `before`, those with a smaller id (Gotify's `since`). */
  async recent(clientToken: string, limit: number, before?: number): Promise<GotifyMessage[]> {
    const page = `/message?limit=${limit}${before !== undefined ? `&since=${before}` : ''}`;
    return (await this.call<{ messages: GotifyMessage[] }>('GET', page, clientToken)).messages;
  }

  /** Posts a message as the application (application token); Gotify answers the stored message. */
  post(appToken: string, message: Omit<GotifyMessage, 'id' | 'appid' | 'date'>): Promise<GotifyMessage> {
    return this.call('POST', '/message', appToken, message);
  }
}
