/** auth's authenticate hook: a module auth does not know admits its own credential; an error never lets a request in. */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

const KEY = 'admin-key-0123456789';
const fixtures = path.join(import.meta.dirname, 'fixtures');
let k: TestKernel;
before(async () => {
  k = await startTestKernel({
    only: ['auth', 'system', 'config-api', 'error-envelope', 'sign-in-probe'],
    config: `api_key = "${KEY}"\nmodule_paths = [${JSON.stringify(fixtures)}]\n`,
  });
});
after(() => k?.stop());

const status = async (url: string, headers: Record<string, string>, method = 'GET') => (await k.request(url, { method, headers })).status;

test('a module tapping authenticate admits a request with its own credential, and auth applies the role', async () => {
  assert.equal(await status('/api/status', {}), 401);
  assert.equal(await status('/api/status', { 'x-probe': 'user' }), 200);
  assert.equal(await status('/api/config', { 'x-probe': 'user' }), 403, 'a user principal may not administer');
  assert.equal(await status('/api/config', { 'x-probe': 'admin' }), 200);
  assert.equal(await status('/api/status', { 'x-probe': 'nobody' }), 401);
});

test('a cookie principal passes reads; its change needs the service as Origin', async () => {
  assert.equal(await status('/api/status', { 'x-probe': 'cookie' }), 200);
  assert.equal(await status('/api/no-such-route', { 'x-probe': 'cookie', origin: 'https://evil.example' }, 'POST'), 403);
});

test('a throwing tap does not let the request in, neither through the kernel guard nor on the raw hook', async () => {
  assert.equal(await status('/api/status', { 'x-probe': 'throws' }), 401);
  assert.equal(await status('/api/status', { 'x-probe-raw': 'throws' }), 401);
  // The api_key still works beside a broken tap.
  assert.equal(await status('/api/status', { 'x-probe-raw': 'throws', authorization: `Bearer ${KEY}` }), 200);
});

test('an answer that is not a well-formed principal admits nobody', async () => {
  assert.equal(await status('/api/status', { 'x-probe': 'root' }), 401);
});
