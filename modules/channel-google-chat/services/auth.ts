/**
 * Both ways of Google's authentication. Out: the service account's key signs a JWT assertion (RS256, scope chat.bot)
 * exchanged at the token endpoint for an access token (the OAuth 2.0 JWT bearer grant), kept until a minute before it
 * expires. In: each request Chat makes carries `Authorization: Bearer <JWT>` signed by chat@system.gserviceaccount.com
 * with the project number as audience; it is verified against that account's published keys (a JWK set fetched
 * through net's fetch, fetched again when a token names a key not in it, at most once a minute: Google rotates them).
 */
import { createLocalJWKSet, errors, importPKCS8, jwtVerify, SignJWT, type JSONWebKeySet } from 'jose';
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { channelError, googleFetch } from './http.ts';

const CHAT_SCOPE = 'https://www.googleapis.com/auth/chat.bot';
const REFETCH_KEYS_MS = 60_000;

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** The service account's JSON key (the channel's token), or an auth error naming what is missing. */
export function parseKey(token: string | undefined): ServiceAccountKey {
  let key: unknown;
  try {
    key = JSON.parse(token ?? '');
  } catch {
    throw channelError("token: expected the service account's JSON key (the file downloaded from the Cloud console)", 'auth');
  }
  const k = key as Partial<ServiceAccountKey> | null;
  if (typeof k?.client_email !== 'string' || typeof k.private_key !== 'string' || !k.private_key.includes('PRIVATE KEY'))
    throw channelError("token: the service account's JSON key needs client_email and private_key", 'auth');
  return { client_email: k.client_email, private_key: k.private_key, ...(typeof k.private_key_id === 'string' ? { private_key_id: k.private_key_id } : {}) };
}

/** The access tokens of the service account, fetched when none is held or the one held is about to expire. */
export function accessTokens(ctx: AdapterContext, kit: () => ChannelKit, key: ServiceAccountKey, tokenUrl: string) {
  let held: { token: string; until: number } | undefined;
  return {
    async get(): Promise<string> {
      if (held && held.until > Date.now()) return held.token;
      const signing = await importPKCS8(key.private_key, 'RS256').catch(() => {
        throw channelError("token: the service account's private_key is not a PKCS#8 RSA key", 'auth');
      });
      const assertion = await new SignJWT({ scope: CHAT_SCOPE })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) })
        .setIssuer(key.client_email)
        .setAudience(tokenUrl)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(signing);
      const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
      const res = await googleFetch(ctx, kit, {
        what: 'the token endpoint',
        url: tokenUrl,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      }).catch((err: Error & { kind?: string }) => {
        // A refused grant (invalid_grant: a deleted key, a wrong account) is the credentials' fault.
        throw err.kind === 'permanent' ? channelError(`${err.message} (check the service account key)`, 'auth') : err;
      });
      const answer = JSON.parse(res.body.toString('utf8')) as { access_token?: unknown; expires_in?: unknown };
      if (typeof answer.access_token !== 'string') throw channelError('the token endpoint answered no access_token', 'transient');
      const seconds = typeof answer.expires_in === 'number' ? answer.expires_in : 3600;
      held = { token: answer.access_token, until: Date.now() + Math.max(0, seconds - 60) * 1000 };
      return held.token;
    },
    /** The API refused the token held (revoked early): the next call fetches a new one. */
    drop() {
      held = undefined;
    },
  };
}

/** Verifies the bearer tokens of Chat's requests against the issuer's keys; `verify` resolves with the problem, or undefined. */
export function requestVerifier(ctx: AdapterContext, kit: () => ChannelKit, options: { jwksUrl: string; issuer: string; audience: string }) {
  let keys: ReturnType<typeof createLocalJWKSet> | undefined;
  // When the last read began, failed or not, and the read under way: concurrent requests share it.
  let triedAt = 0;
  let loading: Promise<void> | undefined;
  const read = async () => {
    triedAt = Date.now();
    const res = await googleFetch(ctx, kit, { what: 'the signing keys (jwks_url)', url: options.jwksUrl, method: 'GET' });
    const set = JSON.parse(res.body.toString('utf8')) as JSONWebKeySet;
    if (!Array.isArray(set.keys)) throw channelError('jwks_url answered no JWK set ({keys: [...]})', 'permanent');
    keys = createLocalJWKSet(set);
  };
  const load = () =>
    (loading ??= read().finally(() => {
      loading = undefined;
    }));
  // exp required: a key-signed token without one would never expire (Chat always sends it).
  const check = (token: string) =>
    jwtVerify(token, keys!, { issuer: options.issuer, audience: options.audience, algorithms: ['RS256'], requiredClaims: ['exp'] });
  return {
    load,
    async verify(header: unknown): Promise<string | undefined> {
      const token = typeof header === 'string' ? /^Bearer ([A-Za-z0-9_.-]{20,8192})$/.exec(header)?.[1] : undefined;
      if (!token) return 'missing or malformed Authorization: Bearer <JWT>';
      try {
        await check(token).catch(async (err: unknown) => {
          // Made-up key ids must not make each request a fetch: one read a minute, failed or not, shared by all.
          if (!(err instanceof errors.JWKSNoMatchingKey) || (!loading && Date.now() - triedAt < REFETCH_KEYS_MS)) throw err;
          await load();
          return check(token);
        });
        return undefined;
      } catch (err) {
        // jose names the failed claim (audience, issuer, expiry) or the signature; never the token itself.
        return `the bearer token is refused: ${err instanceof Error ? err.message : 'invalid'}`;
      }
    },
  };
}
