/**
 * The Bot Framework's signing keys: the OpenID metadata at `openid_url` names a `jwks_uri`, whose JWKS lists the
 * keys (each with the channels it `endorses`). Both are read through the channel's net fetch. The set is kept for a
 * day (Microsoft rotates keys and asks bots to refresh daily) and read again when a token names a key id it does not
 * hold, at most once a second (a failed read counts) so that tokens with made-up key ids cannot turn each request
 * into two fetches, not even while the keys cannot be read.
 */
import type { JWK } from 'jose';

/** A key of the JWKS, with the Bot Framework's endorsements (the channel ids it may sign for). */
export interface BotKey extends JWK {
  kid?: string;
  endorsements?: string[];
}

/** GETs a JSON document; rejects with a message fit for last_error. */
export type FetchJson = (url: string) => Promise<unknown>;

const MAX_AGE_MS = 24 * 60 * 60 * 1000;
const REFRESH_COOLDOWN_MS = 1000;

/** The keys could not be read: the service's problem, not the caller's (a 503, never a 401). */
export class KeysUnavailable extends Error {
  override name = 'KeysUnavailable';
}

export class BotFrameworkKeys {
  private keys: BotKey[] = [];
  private loadedAt = 0;
  /** When the last read began, whether or not it succeeded. */
  private triedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly openidUrl: string,
    private readonly fetchJson: FetchJson,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key with this id, reading the set again when it is old or lacks the id (and was not just read). */
  async find(kid: string): Promise<BotKey | undefined> {
    const resting = () => this.now() - this.triedAt < REFRESH_COOLDOWN_MS;
    if (this.now() - this.loadedAt > MAX_AGE_MS && !resting()) await this.load();
    const held = this.keys.find((k) => k.kid === kid);
    // A read under way is shared (it may bring the rotated key); otherwise one read per cooldown.
    if (held || (resting() && !this.loading)) return held;
    await this.load();
    return this.keys.find((k) => k.kid === kid);
  }

  /** Reads metadata and keys; concurrent callers share one read. */
  load(): Promise<void> {
    this.loading ??= this.read().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async read(): Promise<void> {
    this.triedAt = this.now();
    try {
      const metadata = (await this.fetchJson(this.openidUrl)) as { jwks_uri?: unknown };
      const jwksUri = metadata?.jwks_uri;
      if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri)) throw new Error('the OpenID metadata has no jwks_uri');
      const uri = new URL(jwksUri);
      // The metadata may move the keys to another https host, never to a plain-http or private one it does not own.
      if (uri.protocol !== 'https:' && uri.origin !== new URL(this.openidUrl).origin)
        throw new Error(`jwks_uri ${uri.origin} is neither https nor openid_url's origin`);
      const jwks = (await this.fetchJson(uri.toString())) as { keys?: unknown };
      if (!Array.isArray(jwks?.keys)) throw new Error('the JWKS has no keys array');
      this.keys = (jwks.keys as BotKey[]).filter((k) => typeof k === 'object' && k !== null && k.kty === 'RSA' && typeof k.kid === 'string');
      this.loadedAt = this.now();
    } catch (err) {
      throw new KeysUnavailable(`teams: the Bot Framework signing keys could not be read: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
