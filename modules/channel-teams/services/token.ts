/**
 * The bot's own token for the connector: OAuth 2.0 client credentials (app_id, the app password) at `token_url` with
 * the Bot Framework scope, kept until shortly before it expires. The endpoint's refusal of the credentials is an
 * `auth` error (the channel stops with last_error); its answer carries only the error code, never the password.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { channelError, fetchFailure, retryAfter } from './errors.ts';

const SCOPE = 'https://api.botframework.com/.default';
/** Renewed this long before expiry, so a send never carries a token that lapses in flight. */
const MARGIN_S = 300;

export class BotTokens {
  private cached: { token: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly ctx: AdapterContext,
    private readonly kit: ChannelKit,
    private readonly creds: { url: string; appId: string; password: string },
  ) {}

  async get(): Promise<string> {
    if (this.cached && Date.now() < this.cached.expiresAt) return this.cached.token;
    this.pending ??= this.fetch().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** The connector refused the token (revoked, or the clock is off): the next call fetches a new one. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async fetch(): Promise<string> {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.creds.appId, client_secret: this.creds.password, scope: SCOPE });
    const res = await this.ctx
      .fetch({
        url: this.creds.url,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: body.toString(),
        timeoutMs: 15_000,
        maxBytes: 64 * 1024,
        signal: this.ctx.signal,
      })
      .catch((err: unknown) => {
        throw fetchFailure(err, 'the token endpoint');
      });
    const answer = parse(res.body);
    if (res.status === 429)
      throw channelError('rate_limited', 'teams: the token endpoint is rate limiting', retryAfter(res.headers['retry-after'], this.kit.retryAfterMs));
    if (res.status === 400 || res.status === 401 || res.status === 403)
      throw channelError(
        'auth',
        `teams: the token endpoint refused app_id and the app password (${typeof answer.error === 'string' && /^[a-z_]{1,64}$/.test(answer.error) ? answer.error : res.status})`,
      );
    if (res.status < 200 || res.status >= 300) throw channelError('transient', `teams: the token endpoint answered ${res.status}`);
    if (typeof answer.access_token !== 'string' || typeof answer.expires_in !== 'number')
      throw channelError('transient', 'teams: the token endpoint answered without access_token and expires_in');
    const lifetime = answer.expires_in;
    this.cached = { token: answer.access_token, expiresAt: Date.now() + (lifetime - Math.min(MARGIN_S, lifetime / 2)) * 1000 };
    return answer.access_token;
  }
}

function parse(body: Buffer): { access_token?: unknown; expires_in?: unknown; error?: unknown } {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}
