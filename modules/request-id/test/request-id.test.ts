import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
let k: TestKernel;
let slow: TestKernel;

before(async () => {
  [k, slow] = await Promise.all([
    startTestKernel({ only: ['request-id', 'auth', 'system', 'error-envelope', 'config-api', 'logs'], config: 'api_key = "test-key-0123456789"\n' }),
    // 0.05 unit/s: a 3-unit burst, so the fourth GET is refused.
    startTestKernel({ only: ['request-id', 'rate-limit', 'system'], config: 'rate_limit_per_second = 0.05\n' }),
  ]);
});
after(() => Promise.all([k?.stop(), slow?.stop()]));

const auth = { authorization: 'Bearer test-key-0123456789' };

test('a UUID x-request-id on 200, 404, 400 and 401 replies, unique per request', async () => {
  const replies = await Promise.all([
    k.request('/api/health'),
    k.request('/nowhere', { headers: auth }),
    k.request('/api/config/set', { method: 'POST', headers: auth, json: { path: 'log_level' } }),
    k.request('/api/status'),
  ]);
  assert.deepEqual(
    replies.map((r) => r.status),
    [200, 404, 400, 401],
  );
  const ids = replies.map((r) => r.headers.get('x-request-id') ?? '');
  for (const id of ids) assert.match(id, UUID);
  assert.equal(new Set(ids).size, ids.length);
});

test('on a 429', async () => {
  let res: Response | undefined;
  for (let i = 0; i < 10 && res?.status !== 429; i++) res = await slow.request('/api/health');
  assert.equal(res?.status, 429);
  assert.match(res.headers.get('x-request-id') ?? '', UUID);
});

test('a valid UUID sent by the client is kept; anything else is replaced', async () => {
  const mine = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
  const kept = await k.request('/api/health', { headers: { 'x-request-id': mine } });
  assert.equal(kept.headers.get('x-request-id'), mine);
  const replaced = await k.request('/api/health', { headers: { 'x-request-id': 'not-a-uuid' } });
  assert.match(replaced.headers.get('x-request-id') ?? '', UUID);
  assert.notEqual(replaced.headers.get('x-request-id'), 'not-a-uuid');
});

test('on an SSE stream', async () => {
  const controller = new AbortController();
  const res = await k.request('/api/logs/stream', { headers: auth, signal: controller.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.match(res.headers.get('x-request-id') ?? '', UUID);
  controller.abort();
  await res.body?.cancel().catch(() => undefined);
});
