import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['security-headers', 'auth', 'system', 'error-envelope', 'config-api', 'logs'], config: 'api_key = "k-123"\n' });
});
after(() => k?.stop());

const auth = { authorization: 'Bearer k-123' };

function assertSecurityHeaders(res: Response, cacheControl = 'no-store, no-cache, must-revalidate'): void {
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /^default-src 'self'; /);
  assert.match(csp, /object-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(res.headers.get('strict-transport-security'), 'max-age=63072000; includeSubDomains');
  assert.equal(res.headers.get('referrer-policy'), 'strict-origin-when-cross-origin');
  assert.equal(res.headers.get('cache-control'), cacheControl);
}

test('on successful replies (JSON and HTML)', async () => {
  for (const path of ['/api/health', '/']) {
    const res = await k.request(path);
    assert.equal(res.status, 200);
    assertSecurityHeaders(res);
  }
});

test('on errors: 401, 404, 400', async () => {
  const replies = [
    await k.request('/api/status'),
    await k.request('/missing', { headers: auth }),
    await k.request('/api/config/set', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{' }),
  ];
  assert.deepEqual(
    replies.map((r) => r.status),
    [401, 404, 400],
  );
  for (const res of replies) assertSecurityHeaders(res);
});

test('on an SSE stream', async () => {
  const controller = new AbortController();
  const res = await k.request('/api/logs/stream', { headers: auth, signal: controller.signal });
  assert.equal(res.status, 200);
  // An event stream keeps the SDK's own cache policy (no-transform keeps proxies from buffering it).
  assertSecurityHeaders(res, 'no-cache, no-transform');
  controller.abort();
  await res.body?.cancel().catch(() => undefined);
});

test('the service runs without the module, and then sends none of them', async () => {
  const bare = await startTestKernel({ only: ['system'], config: '[modules]\ndisabled = ["security-headers"]\n' });
  try {
    const res = await bare.request('/api/health');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-frame-options'), null);
  } finally {
    await bare.stop();
  }
});
