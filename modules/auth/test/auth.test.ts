import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const only = ['auth', 'system', 'error-envelope', 'config-api', 'cors', 'auth-probe'];
let keyed: TestKernel;
let open: TestKernel;

before(async () => {
  [keyed, open] = await Promise.all([
    startTestKernel({ only, config: `api_key = "s3cret-key"\nmodule_paths = [${JSON.stringify(fixtures)}]\n` }),
    startTestKernel({ only, config: `module_paths = [${JSON.stringify(fixtures)}]\n` }),
  ]);
});
after(() => Promise.all([keyed?.stop(), open?.stop()]));

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function expect401(res: Response, message: string): Promise<void> {
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('www-authenticate'), 'Bearer');
  assert.deepEqual(await res.json(), { error: message });
}

test('with a key: no header is 401 "Missing ..." on private routes, unknown routes too', async () => {
  for (const p of ['/api/status', '/api/health/detail', '/probe/private', '/api/config', '/no/such/route']) {
    await expect401(await keyed.request(p), 'Missing Authorization: Bearer <api_key> header');
  }
  await expect401(await keyed.request('/api/mcp', { method: 'POST', json: {} }), 'Missing Authorization: Bearer <api_key> header');
  await expect401(
    await keyed.request('/api/status', { headers: { authorization: 'Basic czNjcmV0LWtleQ==' } }),
    'Missing Authorization: Bearer <api_key> header',
  );
});

test('with a key: a wrong key is 401 "Invalid API key", whatever its length', async () => {
  for (const wrong of ['s3cret-kez', 's3cret', 's3cret-key-and-more', 'x']) {
    await expect401(await keyed.request('/api/status', { headers: bearer(wrong) }), 'Invalid API key');
  }
});

test('with a key: the right key passes', async () => {
  const res = await keyed.request('/api/status', { headers: bearer('s3cret-key') });
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { status: string }).status, 'running');
  assert.equal((await keyed.request('/probe/private', { headers: bearer('s3cret-key') })).status, 200);
  assert.equal((await keyed.request('/no/such/route', { headers: bearer('s3cret-key') })).status, 404);
});

test('with a key: GET /api/health, GET /, POST /mcp and public routes stay open', async () => {
  assert.equal((await keyed.request('/api/health')).status, 200);
  const front = await keyed.request('/');
  assert.equal(front.status, 200);
  assert.match(front.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal((await keyed.request('/mcp', { method: 'POST', json: {} })).status, 200);
  assert.deepEqual(await (await keyed.request('/probe/public')).json(), { open: true });
});

test('with a key: a CORS preflight passes without credentials', async () => {
  const res = await keyed.request('/api/status', {
    method: 'OPTIONS',
    headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
  });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173');
});

test('without a key: everything is open', async () => {
  for (const p of ['/api/status', '/api/health/detail', '/probe/private', '/api/config']) {
    assert.equal((await open.request(p)).status, 200, p);
  }
  // A stray header does no harm.
  assert.equal((await open.request('/api/status', { headers: bearer('whatever') })).status, 200);
});

test('a key set at run time applies to the next request, and clearing it opens the API again', async () => {
  const set = await open.request('/api/config/set', { method: 'POST', json: { path: 'api_key', value: 'fresh-key' } });
  assert.equal(set.status, 200);
  assert.deepEqual(await set.json(), { status: 'updated', path: 'api_key', value: '<redacted>', restart_required: false });
  await expect401(await open.request('/api/status'), 'Missing Authorization: Bearer <api_key> header');
  assert.equal((await open.request('/api/status', { headers: bearer('fresh-key') })).status, 200);
  const cleared = await open.request('/api/config/set', { method: 'POST', headers: bearer('fresh-key'), json: { path: 'api_key', value: '' } });
  assert.equal(cleared.status, 200);
  assert.equal((await open.request('/api/status')).status, 200);
});
