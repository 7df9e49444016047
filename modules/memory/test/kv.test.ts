import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestKernel } from '@talon/testing';
import { startMemoryKernel, json, AGENT_A, AGENT_B } from './helpers.ts';

let k: TestKernel;
before(async () => {
  k = await startMemoryKernel('[memory]\nmax_value_bytes = 1024\n');
});
after(() => k.stop());

const kv = (agent: string, key = '') => `/api/memory/agents/${agent}/kv${key ? `/${encodeURIComponent(key)}` : ''}`;

test('PUT creates and overwrites, GET reads back any JSON value', async () => {
  for (const value of [1, 'text', null, true, [1, { a: [2] }], { nested: { deep: ['x', 1.5, false, null] } }]) {
    const put = await k.request(kv(AGENT_A, 'k1'), { method: 'PUT', json: { value } });
    assert.equal(put.status, 200);
    assert.deepEqual(await json(put), { status: 'stored', key: 'k1' });
    const get = await k.request(kv(AGENT_A, 'k1'));
    assert.equal(get.status, 200);
    assert.deepEqual(await json(get), { key: 'k1', value });
  }
});

test('list gives {kv_pairs} sorted by key; agents are isolated', async () => {
  await k.request(kv(AGENT_A, 'b.key'), { method: 'PUT', json: { value: 'B' } });
  await k.request(kv(AGENT_A, 'a:key'), { method: 'PUT', json: { value: 'A' } });
  await k.request(kv(AGENT_B, 'a:key'), { method: 'PUT', json: { value: 'other agent' } });
  const a = await json<{ kv_pairs: Array<{ key: string; value: unknown }> }>(await k.request(kv(AGENT_A)));
  assert.deepEqual(
    a.kv_pairs.filter((p) => p.key !== 'k1'),
    [
      { key: 'a:key', value: 'A' },
      { key: 'b.key', value: 'B' },
    ],
  );
  const b = await json<{ kv_pairs: unknown[] }>(await k.request(kv(AGENT_B)));
  assert.deepEqual(b.kv_pairs, [{ key: 'a:key', value: 'other agent' }]);
  assert.equal((await k.request(kv(AGENT_B, 'b.key'))).status, 404);
  // Deleting in one agent leaves the other's key alone.
  assert.equal((await k.request(kv(AGENT_B, 'a:key'), { method: 'DELETE' })).status, 200);
  assert.deepEqual(await json(await k.request(kv(AGENT_A, 'a:key'))), { key: 'a:key', value: 'A' });
});

test('GET and DELETE of a missing key answer 404 naming the key', async () => {
  const get = await k.request(kv(AGENT_A, 'missing_key'));
  assert.equal(get.status, 404);
  assert.match((await json<{ error: string }>(get)).error, /missing_key/);
  const del = await k.request(kv(AGENT_A, 'missing_key'), { method: 'DELETE' });
  assert.equal(del.status, 404);
  assert.match((await json<{ error: string }>(del)).error, /missing_key/);
});

test('DELETE answers {status: deleted, key}', async () => {
  await k.request(kv(AGENT_A, 'gone'), { method: 'PUT', json: { value: 1 } });
  const del = await k.request(kv(AGENT_A, 'gone'), { method: 'DELETE' });
  assert.deepEqual(await json(del), { status: 'deleted', key: 'gone' });
  assert.equal((await k.request(kv(AGENT_A, 'gone'))).status, 404);
});

test('bad agent ids, keys, bodies and oversized values are refused', async () => {
  const bad = await k.request(kv('not-a-uuid', 'x'));
  assert.equal(bad.status, 400);
  assert.match((await json<{ error: string }>(bad)).error, /not-a-uuid/);
  assert.equal((await k.request(kv('nope'))).status, 400);
  const badKey = await k.request(kv(AGENT_A, 'has space'), { method: 'PUT', json: { value: 1 } });
  assert.equal(badKey.status, 400);
  assert.match((await json<{ error: string }>(badKey)).error, /has space/);
  const long = await k.request(kv(AGENT_A, 'x'.repeat(257)), { method: 'PUT', json: { value: 1 } });
  assert.equal(long.status, 400);
  assert.equal((await k.request(kv(AGENT_A, 'x'.repeat(256)), { method: 'PUT', json: { value: 1 } })).status, 200);
  const noValue = await k.request(kv(AGENT_A, 'k'), { method: 'PUT', json: {} });
  assert.equal(noValue.status, 400);
  assert.equal(typeof (await json<{ error: string }>(noValue)).error, 'string');
  const extra = await k.request(kv(AGENT_A, 'k'), { method: 'PUT', json: { value: 1, other: 2 } });
  assert.equal(extra.status, 400);
  const big = await k.request(kv(AGENT_A, 'big'), { method: 'PUT', json: { value: 'x'.repeat(2000) } });
  assert.equal(big.status, 413);
  assert.match((await json<{ error: string }>(big)).error, /big/);
  assert.equal((await k.request(kv(AGENT_A, 'big'))).status, 404);
  const malformed = await k.request(kv(AGENT_A, 'k'), { method: 'PUT', body: '{"value":', headers: { 'content-type': 'application/json' } });
  assert.equal(malformed.status, 400);
});
