/**
 * Two processes on one home (on PostgreSQL, two nodes on one database): a sign-in begun on one completes on the other,
 * once; a session begun on one is accepted by the other within a second, and so is its end.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { startIdp, throughProvider, type Idp } from './idp.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-oidc-two-'));
let a: TestKernel;
let b: TestKernel;
let idp: Idp;

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

/** A login on `a` up to the provider's answer: the callback URL's path and query, for either process. */
async function callbackOfLoginOnA(): Promise<string> {
  const login = await a.request('/api/auth/login/test', { redirect: 'manual' });
  assert.equal(login.status, 302);
  const back = await throughProvider(login.headers.get('location')!, idp.issuer);
  return back.pathname + back.search;
}

const unknownState = async (res: Response) => {
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /unknown or expired sign-in state: start again at \/api\/auth\/login/);
};

test('a sign-in begun on one process completes on the other; its state replayed on the first is refused with 400', async () => {
  const callback = await callbackOfLoginOnA();
  const done = await b.request(callback, { redirect: 'manual', headers: { accept: 'application/json' } });
  assert.equal(done.status, 200, await done.clone().text());
  assert.equal(((await done.json()) as { user: { sub: string } }).user.sub, 'alice');
  const cookie = done.headers.get('set-cookie')!.split(';')[0];
  assert.equal((await b.request('/api/auth/userinfo', { headers: { cookie } })).status, 200);
  await unknownState(await a.request(callback, { redirect: 'manual' }));
});

test('one state called back on both processes at once: one signs in, the other gets the same 400', async () => {
  const callback = await callbackOfLoginOnA();
  const answers = await Promise.all([a, b].map((k) => k.request(callback, { redirect: 'manual' })));
  const signedIn = answers.filter((r) => r.status === 303);
  assert.equal(signedIn.length, 1, `statuses ${answers.map((r) => r.status).join(', ')}`);
  await unknownState(answers.find((r) => r.status !== 303)!);
});
