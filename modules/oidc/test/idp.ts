/**
 * A real OpenID Connect provider (oidc-provider) on 127.0.0.1 for the sign-in tests. Its interaction step signs in
 * the account the test chose (no login form) and grants the requested scopes.
 */
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface Idp {
  issuer: string;
  /** The account the next interaction signs in. */
  account: { id: string; email: string; email_verified: boolean; name: string };
  stop(): Promise<void>;
}

export async function startIdp(client: { client_id: string; client_secret: string; redirect_uri: string }): Promise<Idp> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: Idp = {
    issuer,
    account: { id: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice' },
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  // A signing key of the test's own, so the provider does not fall back to its development keys.
  const jwk = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256' };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: [
      {
        client_id: client.client_id,
        client_secret: client.client_secret,
        redirect_uris: [client.redirect_uri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    scopes: ['openid', 'email', 'profile'],
    findAccount: async (_ctx, id) => {
      const a = { ...idp.account };
      return { accountId: id, claims: async () => ({ sub: id, email: a.email, email_verified: a.email_verified, name: a.name }) };
    },
    features: { devInteractions: { enabled: false }, introspection: { enabled: true } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
  });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return void callback(req, res);
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({ accountId: idp.account.id, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: idp.account.id }, consent: { grantId } }, { mergeWithLastSubmission: false });
    })().catch((err: Error) => res.writeHead(500).end(err.message));
  });
  return idp;
}

/** A browser's cookie jar for one host, enough to follow the provider's redirects. */
export class Jar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** Follows redirects by hand while they stay on the provider; returns the first URL outside it. */
export async function throughProvider(start: string, issuer: string): Promise<URL> {
  const jar = new Jar();
  let url = new URL(start);
  for (let hop = 0; hop < 10; hop++) {
    if (url.origin !== issuer) return url;
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(res);
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider stopped at ${url.pathname} with ${res.status}: ${(await res.text()).slice(0, 300)}`);
    url = new URL(location, url);
  }
  throw new Error('too many redirects');
}
