// The Bot Framework fake's own protocol behaviour, with plain fetch and node:crypto: its metadata and keys, the token
// endpoint, the connector's bearer check and recording, and JWTs that verify with the published key.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { startTeamsFake, type TeamsFake } from './server.ts';

let teams: TeamsFake;
before(async () => {
  teams = await startTeamsFake();
});
after(() => teams.stop());

const tokenFor = (secret: string) =>
  fetch(teams.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: teams.appId,
      client_secret: secret,
      scope: 'https://api.botframework.com/.default',
    }),
  });

test('the metadata names the JWKS, and a JWT the sender makes verifies with the published key', async () => {
  const metadata = (await (await fetch(teams.openidUrl)).json()) as { issuer: string; jwks_uri: string };
  assert.equal(metadata.issuer, 'https://api.botframework.com');
  const { keys } = (await (await fetch(metadata.jwks_uri)).json()) as { keys: Array<JsonWebKey & { kid: string; endorsements: string[] }> };
  const jwt = teams.token({ aud: teams.appId });
  const [h, p, s] = jwt.split('.') as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { kid: string; alg: string };
  assert.equal(header.alg, 'RS256');
  const key = keys.find((k) => k.kid === header.kid)!;
  assert.deepEqual(key.endorsements, ['msteams']);
  assert.ok(verify('sha256', Buffer.from(`${h}.${p}`), createPublicKey({ key, format: 'jwk' }), Buffer.from(s, 'base64url')));
  const forged = teams.token({ aud: teams.appId }, { forge: true }).split('.') as [string, string, string];
  assert.ok(!verify('sha256', Buffer.from(`${forged[0]}.${forged[1]}`), createPublicKey({ key, format: 'jwk' }), Buffer.from(forged[2], 'base64url')));
});

test('the token endpoint refuses a wrong secret; the connector takes only tokens it issued and records the activity', async () => {
  const refused = await tokenFor('wrong');
  assert.equal(refused.status, 401);
  assert.equal(((await refused.json()) as { error: string }).error, 'invalid_client');
  const { access_token } = (await (await tokenFor(teams.appPassword)).json()) as { access_token: string };
  const url = `${teams.serviceUrl}v3/conversations/${encodeURIComponent('19:c@thread.skype;messageid=7')}/activities/7`;
  const body = JSON.stringify({ type: 'message', text: 'hi' });
  assert.equal((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status, 401);
  const ok = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` }, body });
  assert.equal(ok.status, 201);
  assert.deepEqual(
    teams.sent.map((s) => [s.conversationId, s.replyToId, s.activity.text]),
    [['19:c@thread.skype;messageid=7', '7', 'hi']],
  );
  teams.failNext(429, 2);
  const limited = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` }, body });
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '2');
});
