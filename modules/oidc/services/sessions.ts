/**
 * Dashboard sessions: an opaque random cookie value (32 bytes, base64url); the server keeps its SHA-256 only, so a
 * copy of the database opens no session. The cookie is HttpOnly, SameSite=Lax, Path=/, Secure on HTTPS, and lives
 * as long as the session ([oidc] session_ttl_secs). Every request with the cookie is checked, so the live sessions
 * are kept in memory: loaded at start, changed with each write here, and read again when another process sharing the
 * home signs someone in or out.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Queries, Store } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
import type { DashboardSessions, SessionPrincipal } from '@talon/oidc';
import type { OidcConfig } from '../config.ts';

export interface Profile {
  sub: string;
  email: string | null;
  email_verified: boolean | null;
  name: string | null;
  picture: string | null;
}

interface Row {
  token_hash: string;
  provider: string;
  sub: string;
  email: string | null;
  name: string | null;
  picture: string | null;
  profile: string;
  access_token: string | null;
  created_at: string;
  expires_at: number;
}

export interface Session {
  provider: string;
  profile: Profile;
  accessToken?: string;
  createdAt: string;
  expiresAt: string;
}

/** The change-feed topic of the sessions (key: the token hash). */
export const SESSIONS_TOPIC = 'sessions';

const digest = (token: string) => createHash('sha256').update(token).digest('hex');
const vaultOwner = (hash: string) => `oidc:access-token:${hash}`;

export function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  const raw = Array.isArray(header) ? header.join('; ') : (header ?? '');
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(name: string, value: string, maxAgeSecs: number, secure: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSecs}${secure ? '; Secure' : ''}`;
}

export class Sessions implements DashboardSessions {
  /** The live sessions by token hash. */
  private live = new Map<string, Row>();

  constructor(
    private readonly store: Store,
    private readonly config: () => OidcConfig,
    private readonly vault: () => SecretVault,
    /** Notes a change of a session for the other processes, inside the writing transaction. */
    private readonly noteChange: (t: Queries, hash: string) => Promise<void>,
  ) {}

  /** Reads the live sessions (start). */
  async load(): Promise<void> {
    const rows = await this.store.many<Row>('SELECT * FROM oidc_sessions WHERE expires_at > ?', [Date.now()]);
    this.live = new Map(rows.map((r) => [r.token_hash, r]));
  }

  /** Another process began or ended this session: read it again ('' — notes may have been missed — all of them). */
  async heard(hash: string): Promise<void> {
    if (!hash) return this.load();
    const row = await this.store.one<Row>('SELECT * FROM oidc_sessions WHERE token_hash = ? AND expires_at > ?', [hash, Date.now()]);
    if (row) this.live.set(hash, row);
    else this.live.delete(hash);
  }

  /** A new session; returns the cookie value (shown to the browser only). */
  async create(provider: string, profile: Profile, accessToken: string | undefined): Promise<{ token: string; expiresAt: string }> {
    const token = randomBytes(32).toString('base64url');
    const hash = digest(token);
    const now = Date.now();
    const row: Row = {
      token_hash: hash,
      provider,
      sub: profile.sub,
      email: profile.email,
      name: profile.name,
      picture: profile.picture,
      profile: JSON.stringify(profile),
      access_token: accessToken ? this.vault().seal(accessToken, vaultOwner(hash)) : null,
      created_at: new Date(now).toISOString(),
      expires_at: now + this.config().session_ttl_secs * 1000,
    };
    await this.store.tx(async (t) => {
      await t.run('DELETE FROM oidc_sessions WHERE expires_at <= ?', [now]);
      await t.run(
        'INSERT INTO oidc_sessions (token_hash, provider, sub, email, name, picture, profile, access_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [row.token_hash, row.provider, row.sub, row.email, row.name, row.picture, row.profile, row.access_token, row.created_at, row.expires_at],
      );
      await this.noteChange(t, hash);
    });
    for (const [key, live] of this.live) if (live.expires_at <= now) this.live.delete(key);
    this.live.set(hash, row);
    return { token, expiresAt: new Date(row.expires_at).toISOString() };
  }

  /** The live session of a cookie value. */
  get(token: string | undefined): Session | undefined {
    if (!token) return undefined;
    const hash = digest(token);
    const row = this.live.get(hash);
    if (!row) return undefined;
    if (row.expires_at <= Date.now()) {
      this.live.delete(hash);
      return undefined;
    }
    let accessToken: string | undefined;
    try {
      accessToken = row.access_token ? this.vault().open(row.access_token, vaultOwner(hash)) : undefined;
    } catch {
      accessToken = undefined;
    }
    return {
      provider: row.provider,
      profile: JSON.parse(row.profile) as Profile,
      accessToken,
      createdAt: row.created_at,
      expiresAt: new Date(row.expires_at).toISOString(),
    };
  }

  fromHeaders(headers: Record<string, string | string[] | undefined>): { token?: string; session?: Session } {
    const token = cookieValue(headers.cookie, this.config().cookie_name);
    return { token, session: this.get(token) };
  }

  /** Ends the session of this cookie value; false when there was none. */
  async end(token: string | undefined): Promise<boolean> {
    if (token === undefined) return false;
    const hash = digest(token);
    const ended = await this.store.tx(async (t) => {
      const { changes } = await t.run('DELETE FROM oidc_sessions WHERE token_hash = ?', [hash]);
      if (changes === 1) await this.noteChange(t, hash);
      return changes === 1;
    });
    this.live.delete(hash);
    return ended;
  }

  authenticate(headers: Record<string, string | string[] | undefined>): SessionPrincipal | undefined {
    const { session } = this.fromHeaders(headers);
    if (!session) return undefined;
    return {
      subject: `oidc:${session.provider}:${session.profile.sub}`,
      role: 'admin',
      via: 'session',
      provider: session.provider,
      email: session.profile.email,
      expiresAt: session.expiresAt,
    };
  }
}
