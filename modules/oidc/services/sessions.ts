/**
 * Dashboard sessions: an opaque random cookie value (32 bytes, base64url); the server keeps its SHA-256 only, so a
 * copy of the database opens no session. The cookie is HttpOnly, SameSite=Lax, Path=/, Secure on HTTPS, and lives
 * as long as the session ([oidc] session_ttl_secs).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';
import type { SecretVault } from '@talon/catalog';
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
  private readonly sql;

  constructor(
    db: Database,
    private readonly config: () => OidcConfig,
    private readonly vault: () => SecretVault,
  ) {
    this.sql = statements(db);
  }

  /** A new session; returns the cookie value (shown to the browser only). */
  create(provider: string, profile: Profile, accessToken: string | undefined): { token: string; expiresAt: string } {
    const token = randomBytes(32).toString('base64url');
    const hash = digest(token);
    const expires = Date.now() + this.config().session_ttl_secs * 1000;
    this.sql('DELETE FROM oidc_sessions WHERE expires_at <= ?').run(Date.now());
    this.sql(
      'INSERT INTO oidc_sessions (token_hash, provider, sub, email, name, picture, profile, access_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      hash,
      provider,
      profile.sub,
      profile.email,
      profile.name,
      profile.picture,
      JSON.stringify(profile),
      accessToken ? this.vault().seal(accessToken, vaultOwner(hash)) : null,
      new Date().toISOString(),
      expires,
    );
    return { token, expiresAt: new Date(expires).toISOString() };
  }

  /** The live session of a cookie value. */
  get(token: string | undefined): Session | undefined {
    if (!token) return undefined;
    const hash = digest(token);
    const row = this.sql<[string, number], Row>('SELECT * FROM oidc_sessions WHERE token_hash = ? AND expires_at > ?').get(hash, Date.now());
    if (!row) return undefined;
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
  end(token: string | undefined): boolean {
    return token !== undefined && this.sql('DELETE FROM oidc_sessions WHERE token_hash = ?').run(digest(token)).changes === 1;
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
