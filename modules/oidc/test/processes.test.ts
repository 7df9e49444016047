/** Two processes on one home: a session begun on one is accepted by the other within a second, and so is its end. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { startIdp, throughProvider, type Idp } from './idp.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-oidc-two-'));
let a: TestKernel;
let b: TestKernel;
let idp: Idp;

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const config = (listen: string) =>
  [
    `api_listen = "${listen}"`,
    'api_key = "admin-key-for-oidc-tests-123"',
    '[oidc]',
    'allow_hosts = ["127.0.0.1"]',
    '[[oidc.providers]]',
    'id = "test"',
    `issuer_url = "${idp.issuer}"`,
    'client_id = "talon"',
    'client_secret_env = "OIDC_TEST_SECRET"',
  ].join('\n');

before(async () => {
  const port = await freePort();
  idp = await startIdp({ client_id: 'talon', client_secret: 'idp-client-secret', redirect_uri: `http://127.0.0.1:${port}/api/auth/callback` });
  process.env.OIDC_TEST_SECRET = 'idp-client-secret';
  const options = { only: ['oidc', 'auth', 'error-envelope'], home, heartbeatMs: 200, feedPollMs: 50 };
  // The provider sends the browser back to the first process; the second listens elsewhere.
  a = await startTestKernel({ ...options, config: config(`127.0.0.1:${port}`) });
  b = await startTestKernel({ ...options, config: config('127.0.0.1:0') });
});
after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await idp?.stop();
  rmSync(home, { recursive: true, force: true });
});

test('a session begun on one process is accepted by the other within a second; ended on the other, refused by the first', async () => {
  const login = await a.request('/api/auth/login/test', { redirect: 'manual' });
  const back = await throughProvider(login.headers.get('location')!, idp.issuer);
  const signedIn = await a.request(back.pathname + back.search, { redirect: 'manual' });
  assert.equal(signedIn.status, 303);
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0];
  const userinfo = async (k: TestKernel) => (await k.request('/api/auth/userinfo', { headers: { cookie } })).status;
  assert.equal(await userinfo(a), 200);
  await waitFor(async () => (await userinfo(b)) === 200, 1000, 'the session known to the other process');
  const out = await b.request('/auth/logout', { method: 'POST', headers: { cookie } });
  assert.deepEqual(await out.json(), { ok: true, signed_out: true });
  assert.equal(await userinfo(b), 401);
  await waitFor(async () => (await userinfo(a)) === 401, 1000, 'the logout known to the first process');
});
