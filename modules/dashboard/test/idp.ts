/**
 * An OpenID Connect provider (oidc-provider) on 127.0.0.1 for the single sign-on test, with the provider's own
 * login and consent pages (its development interactions): the browser signs in there as a person would.
 */
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface Idp {
  issuer: string;
  stop(): Promise<void>;
}

export async function startIdp(client: { client_id: string; client_secret: string; redirect_uri: string }): Promise<Idp> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const jwk = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256' };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    cookies: { keys: ['dashboard-test-cookie-key'] },
    clients: [{ ...client, redirect_uris: [client.redirect_uri], grant_types: ['authorization_code'], response_types: ['code'] }],
    // The account is whatever the login form was given; its e-mail is that login.
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, email: id, email_verified: true }) }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: true } },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
