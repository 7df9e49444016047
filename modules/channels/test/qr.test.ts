/**
 * The QR sign-in routes, over a fixture adapter with `capabilities.qr` (test/fixtures/channel-qr): start is
 * idempotent while the code is being scanned, status walks pending → scanned → authenticated (the adapter then starts),
 * an expired or failed sign-in is a 410 error, a channel without QR sign-in is a 400 naming it, an unknown one a 404.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, type AgentTestKernel } from '@talon/testing';
import { fixtures, until } from './helpers.ts';

let k: AgentTestKernel;
before(async () => {
  k = await startAgentTestKernel({
    only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'channels', 'channel-fake', 'channel-qr'],
    config: `module_paths = ["${fixtures}"]\n`,
  });
});
after(() => k?.stop());

const call = async (method: string, path: string, json?: unknown) => {
  const res = await k.request(path, { method, ...(json !== undefined ? { json } : {}) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const start = () => call('POST', '/api/channels/qrchat/qr/start');
const status = () => call('GET', '/api/channels/qrchat/qr/status');
const signal = (s: string, error?: string, code?: string) => call('POST', '/api/test-qr/signal', { status: s, error, code });
/** A pending status answers the code to show (as text and as a PNG data URL) and its expiry. */
const assertPending = async (code: string, expiresAt: string) => {
  const res = await status();
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body).sort(), ['expires_at', 'qr_code', 'qr_data_url', 'status']);
  assert.equal(res.body.status, 'pending');
  assert.equal(res.body.qr_code, code);
  assert.equal(res.body.expires_at, expiresAt);
  assert.match(res.body.qr_data_url, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
};

test('the channel lists QR sign-in among its capabilities', async () => {
  const { body } = await call('GET', '/api/channels/qrchat');
  assert.equal(body.capabilities.qr, true);
});

test('status before any start is a 404 naming the channel', async () => {
  const { status: code, body } = await status();
  assert.equal(code, 404);
  assert.match(body.error, /'qrchat'/);
});

test('start answers the code; a second start while pending or scanned answers the same session', async () => {
  // Configured, but not signed in yet: the adapter refuses to start until the sign-in ends.
  assert.equal((await call('POST', '/api/channels/qrchat/configure', { dm_policy: 'open' })).status, 200);
  const first = await start();
  assert.equal(first.status, 200);
  assert.deepEqual(Object.keys(first.body).sort(), ['channel', 'expires_at', 'qr_code', 'status']);
  assert.equal(first.body.status, 'pending');
  assert.equal(first.body.channel, 'qrchat');
  assert.ok(Date.parse(first.body.expires_at) > Date.now());
  const again = await start();
  assert.equal(again.body.qr_code, first.body.qr_code);
  assert.equal(again.body.expires_at, first.body.expires_at);
  assert.equal((await call('GET', '/api/test-qr/sessions')).body.started, 1);
  await assertPending(first.body.qr_code, first.body.expires_at);

  // The platform rotates the code: the status and a second start follow the one shown now.
  await signal('pending', undefined, 'qrchat-rotated-code');
  const rotated = await start();
  assert.equal(rotated.body.qr_code, 'qrchat-rotated-code');
  assert.notEqual(rotated.body.expires_at, first.body.expires_at);
  await assertPending('qrchat-rotated-code', rotated.body.expires_at);
  assert.equal((await call('GET', '/api/test-qr/sessions')).body.started, 1);

  await signal('scanned');
  assert.deepEqual(await status(), { status: 200, body: { status: 'scanned' } });
  const whileScanned = await start();
  assert.equal(whileScanned.body.qr_code, 'qrchat-rotated-code');
  assert.equal(whileScanned.body.status, 'scanned');
  assert.equal((await call('GET', '/api/test-qr/sessions')).body.started, 1);
});

test('authenticated: the status says so and the adapter starts with its new session', async () => {
  assert.equal((await call('GET', '/api/channels/qrchat')).body.state, 'error'); // not signed in yet
  await signal('authenticated');
  assert.deepEqual(await status(), { status: 200, body: { status: 'authenticated' } });
  await until(async () => (await call('GET', '/api/channels/qrchat')).body.state === 'connected', 'qrchat connected after the sign-in');
  assert.deepEqual(await status(), { status: 200, body: { status: 'authenticated' } });
});

test('a start after the sign-in ended begins a new session', async () => {
  const before = (await call('GET', '/api/test-qr/sessions')).body.started;
  const next = await start();
  assert.equal(next.body.status, 'pending');
  assert.equal((await call('GET', '/api/test-qr/sessions')).body.started, before + 1);
  await assertPending(next.body.qr_code, next.body.expires_at);
});

test('expired and failed are errors (410) saying so, and a new start is possible', async () => {
  await signal('expired');
  let res = await status();
  assert.equal(res.status, 410);
  assert.equal(res.body.status, 'expired');
  assert.match(res.body.error, /qrchat.*expired/);
  const fresh = await start();
  assert.equal(fresh.status, 200);
  assert.equal(fresh.body.status, 'pending');
  await signal('failed', 'the phone refused the link');
  res = await status();
  assert.equal(res.status, 410);
  assert.equal(res.body.status, 'failed');
  assert.match(res.body.error, /failed: the phone refused the link/);
});

test('a sign-in being scanned is cancelled and dropped when its adapter restarts with a new configuration or stops', async () => {
  const sessions = async () => (await call('GET', '/api/test-qr/sessions')).body as { started: number; cancelled: number };
  for (const change of [() => call('POST', '/api/channels/qrchat/configure', { dm_policy: 'allowlist' }), () => call('PUT', '/api/channels/qrchat/disable')]) {
    assert.equal((await start()).body.status, 'pending');
    const before = await sessions();
    assert.equal((await change()).status, 200);
    assert.equal((await sessions()).cancelled, before.cancelled + 1, 'the sign-in was not cancelled');
    assert.equal((await status()).status, 404, 'the sign-in outlived its adapter');
  }
  assert.equal((await call('PUT', '/api/channels/qrchat/enable')).status, 200);
});

test('QR routes on a channel without QR sign-in: 400 naming it; on an unknown channel: 404', async () => {
  const res = await call('POST', '/api/channels/fake/qr/start');
  assert.equal(res.status, 400);
  assert.match(res.body.error, /'fake' does not sign in by QR code/);
  for (const [method, path] of [
    ['POST', '/api/channels/nope/qr/start'],
    ['GET', '/api/channels/nope/qr/status'],
  ]) {
    const r = await call(method, path);
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.match(r.body.error, /'nope'/);
  }
});
