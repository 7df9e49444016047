import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { assertSecurityHeaders } from './expect.ts';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({
    only: ['security-headers', 'auth', 'system', 'dashboard', 'error-envelope', 'config-api', 'logs'],
    config: 'api_key = "test-key-0123456789"\n',
  });
});
after(() => k?.stop());

const auth = { authorization: 'Bearer test-key-0123456789' };

test('on successful replies (JSON and HTML)', async () => {
  for (const path of ['/api/health', '/']) {
    const res = await k.request(path);
    assert.equal(res.status, 200);
    assertSecurityHeaders((name) => res.headers.get(name));
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
  for (const res of replies) assertSecurityHeaders((name) => res.headers.get(name));
});

test('on an SSE stream', async () => {
  const controller = new AbortController();
  const res = await k.request('/api/logs/stream', { headers: auth, signal: controller.signal });
  assert.equal(res.status, 200);
  // An event stream keeps the SDK's own cache policy (no-transform keeps proxies from buffering it).
  assertSecurityHeaders((name) => res.headers.get(name), 'no-cache, no-transform');
  controller.abort();
  await res.body?.cancel().catch(() => undefined);
});

test('a security module: disabling it is refused unless [modules] allow_disable_critical says so; then none of the headers', async () => {
  // No `only`: it would bypass [modules] disabled.
  const disabled = '[modules]\ndisabled = ["security-headers"]\n';
  await assert.rejects(
    startTestKernel({ config: disabled }),
    (err: Error) => err.name === 'ConfigError' && /'security-headers', a security module, and its protection is always on/.test(err.message),
  );
  const bare = await startTestKernel({ config: `${disabled}allow_disable_critical = ["security-headers"]\n` });
  try {
    const res = await bare.request('/api/health');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-frame-options'), null);
    assert.equal(res.headers.get('content-security-policy'), null);
  } finally {
    await bare.stop();
  }
});
