import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';

const only = ['cors', 'auth', 'system', 'error-envelope'];
let open: TestKernel;
let keyed: TestKernel;
let star: TestKernel;
let aliased: TestKernel;

before(async () => {
  [open, keyed, star, aliased] = await Promise.all([
    startTestKernel({ only, config: 'cors_origins = ["https://app.example"]\n' }),
    startTestKernel({ only, config: 'api_key = "test-key-0123456789"\ncors_origins = ["https://app.example"]\n' }),
    startTestKernel({ only, config: 'api_key = "test-key-0123456789"\ncors_origins = ["*"]\n' }),
    // The reference system spells the key cors_origin.
    startTestKernel({ only, config: 'api_key = "test-key-0123456789"\ncors_origin = ["https://app.example"]\n' }),
  ]);
});
after(() => Promise.all([open?.stop(), keyed?.stop(), star?.stop(), aliased?.stop()]));

const auth = { authorization: 'Bearer test-key-0123456789' };
const preflight = (origin: string) => ({
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
});

test('no key: localhost origins get CORS headers (reflected), with x-request-id exposed', async () => {
  for (const origin of ['http://localhost:5173', 'http://127.0.0.1:9000', 'http://[::1]:3000']) {
    const res = await open.request('/api/status', { headers: { origin } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), origin);
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /x-request-id/);
    assert.match(res.headers.get('vary') ?? '', /origin/i);
  }
});

test('no key: any other origin is refused with 403 and no CORS headers, even one in cors_origins', async () => {
  for (const origin of ['https://evil.example', 'https://app.example']) {
    const res = await open.request('/api/status', { headers: { origin } });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.deepEqual(await res.json(), { error: `origin '${origin}' is not allowed (see cors_origins)` });
  }
});

test('requests without an Origin (curl, SDKs) are untouched', async () => {
  const res = await open.request('/api/status');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('access-control-allow-origin'), null);
});

test('preflight: allowed origin gets 204 with methods and the requested headers; a refused one gets 403', async () => {
  const ok = await open.request('/api/config/set', preflight('http://localhost:5173'));
  assert.equal(ok.status, 204);
  assert.equal(ok.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  assert.match(ok.headers.get('access-control-allow-methods') ?? '', /POST/);
  assert.equal(ok.headers.get('access-control-allow-headers'), 'authorization, content-type');
  assert.equal(ok.headers.get('access-control-max-age'), '600');
  const refused = await open.request('/api/config/set', preflight('https://evil.example'));
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get('access-control-allow-origin'), null);
});

test('with a key: cors_origins and localhost are allowed, others refused', async () => {
  const app = await keyed.request('/api/status', { headers: { ...auth, origin: 'https://app.example' } });
  assert.equal(app.status, 200);
  assert.equal(app.headers.get('access-control-allow-origin'), 'https://app.example');
  const local = await keyed.request('/api/status', { headers: { ...auth, origin: 'http://localhost:3000' } });
  assert.equal(local.headers.get('access-control-allow-origin'), 'http://localhost:3000');
  const evil = await keyed.request('/api/status', { headers: { ...auth, origin: 'https://evil.example' } });
  assert.equal(evil.status, 403);
  // The preflight of an allowed origin needs no token.
  const pre = await keyed.request('/api/status', preflight('https://app.example'));
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example');
});

test('with a key and cors_origins = ["*"]: any origin, answered with *', async () => {
  const res = await star.request('/api/status', { headers: { ...auth, origin: 'https://anywhere.example' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  const pre = await star.request('/api/status', preflight('https://anywhere.example'));
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
});

test("the reference's spelling cors_origin works as cors_origins", async () => {
  const app = await aliased.request('/api/status', { headers: { ...auth, origin: 'https://app.example' } });
  assert.equal(app.status, 200);
  assert.equal(app.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.equal((await aliased.request('/api/status', { headers: { ...auth, origin: 'https://evil.example' } })).status, 403);
});
