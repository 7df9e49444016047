/**
 * The authorization code flow with PKCE: a login remembers state, nonce and verifier (ten minutes, single use, in the
 * database: pending.ts) and redirects; the callback exchanges the code, has the ID token validated (issuer, audience, nonce, signature),
 * reads the profile from the userinfo endpoint and applies allowed_domains.
 */
import { badRequest, forbidden, HttpError, unauthorized, lazyRequire } from '@talon/module-sdk';
import type * as Client from 'openid-client';
import type { OidcConfig, ProviderConfig } from '../config.ts';
import type { Providers } from './providers.ts';
import type { Profile } from './sessions.ts';
import type { PendingSignIns } from './pending.ts';

/** openid-client is loaded with the first sign-in or token check, not at start-up. */
const client = lazyRequire<typeof Client>(import.meta.url, 'openid-client');

export interface CallbackParams {
  code?: string;
  state?: string;
  error?: string;
  error_description?: string;
  [key: string]: unknown;
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

export class Flows {
  constructor(
    private readonly pending: PendingSignIns,
    private readonly providers: Providers,
    private readonly config: () => OidcConfig,
  ) {}

  async begin(provider: ProviderConfig, baseUrl: string): Promise<URL> {
    const oidc = await this.providers.client(provider);
    const verifier = client().randomPKCECodeVerifier();
    const state = client().randomState();
    const nonce = client().randomNonce();
    const redirectUri = provider.redirect_url || `${baseUrl}/api/auth/callback`;
    await this.pending.add(state, { provider: provider.id, verifier, nonce, redirectUri });
    return client().buildAuthorizationUrl(oidc, {
      redirect_uri: redirectUri,
      scope: provider.scopes.join(' '),
      state,
      nonce,
      code_challenge: await client().calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  }

  async finish(params: CallbackParams): Promise<{ provider: string; profile: Profile; accessToken: string }> {
    if (params.error)
      throw unauthorized(`the identity provider refused the sign-in: ${params.error}${params.error_description ? ` (${params.error_description})` : ''}`);
    if (!params.state || !params.code) throw badRequest('the callback needs code and state');
    const pending = await this.pending.take(params.state);
    if (!pending) throw badRequest('unknown or expired sign-in state: start again at /api/auth/login');
    const provider = this.providers.find(pending.provider);
    const oidc = await this.providers.client(provider);
    const current = new URL(pending.redirectUri);
    for (const [k, v] of Object.entries(params)) if (typeof v === 'string') current.searchParams.set(k, v);
    let tokens: Awaited<ReturnType<typeof Client.authorizationCodeGrant>>;
    try {
      tokens = await client().authorizationCodeGrant(oidc, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: params.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw exchangeError(err);
    }
    const claims = tokens.claims()!;
    const info = oidc.serverMetadata().userinfo_endpoint
      ? await client()
          .fetchUserInfo(oidc, tokens.access_token, claims.sub)
          .catch(() => undefined)
      : undefined;
    const merged = { ...claims, ...(info ?? {}) } as Record<string, unknown>;
    const profile: Profile = {
      sub: claims.sub,
      email: str(merged.email),
      email_verified: typeof merged.email_verified === 'boolean' ? merged.email_verified : null,
      name: str(merged.name),
      picture: str(merged.picture),
    };
    this.checkDomain(provider, profile);
    return { provider: provider.id, profile, accessToken: tokens.access_token };
  }

  private checkDomain(provider: ProviderConfig, profile: Profile): void {
    if (!provider.allowed_domains.length) return;
    const domain = profile.email?.split('@')[1]?.toLowerCase();
    if (!domain || !provider.allowed_domains.some((d) => d.toLowerCase() === domain))
      throw forbidden(`accounts of '${domain ?? 'no e-mail'}' may not sign in here`);
    if (this.config().require_email_verified && profile.email_verified !== true) throw forbidden('the provider has not verified this e-mail address');
  }
}

/** A refused code or a token that does not validate is the caller's problem (400); an unreachable provider is 502. */
function exchangeError(err: unknown): HttpError {
  const e = err as Error & { code?: string; error?: string };
  if (err instanceof client().ResponseBodyError) return badRequest(`the provider refused the code: ${e.error ?? e.message}`);
  if (typeof e.code === 'string' && e.code.startsWith('OAUTH_')) return badRequest(`the sign-in response does not validate: ${e.message}`);
  return new HttpError(502, `code exchange failed: ${e.message}`);
}
