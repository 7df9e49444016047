/** Token introspection (RFC 7662 where the provider offers it, else its userinfo endpoint) and live profiles. */
import { notFound, lazyRequire } from '@talon/module-sdk';
import type * as Client from 'openid-client';
import type { ProviderConfig } from '../config.ts';
import type { Providers } from './providers.ts';
import type { Profile, Session, Sessions } from './sessions.ts';

/** openid-client is loaded with the first sign-in or token check, not at start-up. */
const client = lazyRequire<typeof Client>(import.meta.url, 'openid-client');

export class Introspector {
  constructor(
    private readonly providers: Providers,
    private readonly sessions: Sessions,
  ) {}

  /** The session's profile, fresh from the provider when it answers, else as stored at sign-in. */
  async profile(session: Session): Promise<Profile & { source: 'provider' | 'session' }> {
    try {
      const provider = this.providers.find(session.provider);
      const oidc = await this.providers.client(provider);
      if (session.accessToken && oidc.serverMetadata().userinfo_endpoint) {
        const info = await client().fetchUserInfo(oidc, session.accessToken, session.profile.sub);
        const pick = (k: string) => (typeof info[k] === 'string' ? (info[k] as string) : null);
        return {
          sub: info.sub,
          email: pick('email') ?? session.profile.email,
          email_verified: typeof info.email_verified === 'boolean' ? info.email_verified : session.profile.email_verified,
          name: pick('name') ?? session.profile.name,
          picture: pick('picture') ?? session.profile.picture,
          source: 'provider',
        };
      }
    } catch {
      // the provider is gone or the token expired: what sign-in recorded still describes the user
    }
    return { ...session.profile, source: 'session' };
  }

  async introspect(token: string, providerId?: string): Promise<Record<string, unknown>> {
    const session = this.sessions.get(token);
    if (session)
      return {
        active: true,
        token_type: 'session',
        provider: session.provider,
        sub: session.profile.sub,
        email: session.profile.email,
        exp: Math.floor(Date.parse(session.expiresAt) / 1000),
      };
    const candidates = providerId === undefined ? this.providers.list() : [this.providers.find(providerId)];
    if (providerId !== undefined && !candidates.length) throw notFound(`sign-in provider '${providerId}' is not configured`);
    for (const provider of candidates) {
      const answer = await this.ask(provider, token).catch(() => undefined);
      if (answer) return answer;
    }
    return { active: false };
  }

  private async ask(provider: ProviderConfig, token: string): Promise<Record<string, unknown> | undefined> {
    const oidc = await this.providers.client(provider);
    if (oidc.serverMetadata().introspection_endpoint) {
      const result = await client().tokenIntrospection(oidc, token);
      return result.active ? { ...result, provider: provider.id } : undefined;
    }
    const info = await client().fetchUserInfo(oidc, token, client().skipSubjectCheck);
    return { active: true, provider: provider.id, sub: info.sub, email: info.email ?? null, name: info.name ?? null };
  }
}
