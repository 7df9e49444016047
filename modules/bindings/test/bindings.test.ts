import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { bindingRouter, type BindingRouter } from '@talon/bindings';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['bindings', 'error-envelope'] });
});
after(async () => {
  await k?.stop();
  // The second kernel reused the first one's home.
  if (k) rmSync(k.home, { recursive: true, force: true });
});

const call = async (path: string, method = 'GET', json?: unknown) => {
  const res = await k.request(path, { method, json });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

test('bindings: added, listed most specific first, routed, removed by index, kept across restarts', async () => {
  assert.equal((await call('/api/bindings', 'POST', { agent: 'general', match_rule: { channel: 'telegram' } })).status, 201);
  const peer = await call('/api/bindings', 'POST', { agent: 'vip', match_rule: { channel: 'telegram', peer_id: '42' } });
  assert.equal(peer.status, 201);
  assert.equal(peer.body.status, 'created');
  assert.equal(peer.body.binding.index, 0);
  const list = await call('/api/bindings');
  assert.deepEqual(
    list.body.bindings.map((b: { agent: string }) => b.agent),
    ['vip', 'general'],
  );
  const router = k.kernel.services.view(bindingRouter.id) as BindingRouter;
  assert.equal(router.route({ channel: 'telegram', peer_id: '42' }), 'vip');
  assert.equal(router.route({ channel: 'telegram', peer_id: '7' }), 'general');
  assert.equal(router.route({ channel: 'discord' }), undefined);
  assert.equal((await call('/api/bindings/0', 'DELETE')).status, 204);
  assert.deepEqual(
    (await call('/api/bindings')).body.bindings.map((b: { agent: string }) => b.agent),
    ['general'],
  );
  const home = k.home;
  await k.kernel.stop();
  k = await startTestKernel({ only: ['bindings', 'error-envelope'], home });
  assert.equal((await call('/api/bindings')).body.total, 1);
});

test('bindings: errors', async () => {
  for (const json of [{}, { agent: 'x' }, { agent: 'x', match_rule: {} }, { agent: 'x', match_rule: { planet: 'mars' } }]) {
    const res = await call('/api/bindings', 'POST', json);
    assert.equal(res.status, 400, JSON.stringify(json));
    assert.equal(typeof res.body.error, 'string');
  }
  assert.equal((await call('/api/bindings/99', 'DELETE')).status, 404);
  assert.equal((await call('/api/bindings/abc', 'DELETE')).status, 400);
});

test('bindings: a binding added or removed by another process on the same home routes here within a second', async () => {
  const other = await startTestKernel({ only: ['bindings', 'error-envelope'], home: k.home, feedPollMs: 50 });
  try {
    const router = k.kernel.services.view(bindingRouter.id) as BindingRouter;
    const routed = (want: string | undefined) =>
      waitFor(() => router.route({ channel: 'matrix', peer_id: 'p1' }) === want, 1000, `routing to ${want} within a second`);
    const added = await other.request('/api/bindings', { method: 'POST', json: { agent: 'elsewhere', match_rule: { channel: 'matrix', peer_id: 'p1' } } });
    assert.equal(added.status, 201);
    const { binding } = (await added.json()) as { binding: { index: number } };
    await routed('elsewhere');
    assert.equal((await other.request(`/api/bindings/${binding.index}`, { method: 'DELETE' })).status, 204);
    await routed(undefined);
  } finally {
    await other.stop();
  }
});
