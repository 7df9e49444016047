/** GET/POST /api/agents/{id}/memory/{export,import}: an agent's KV memory, served by the memory module. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { AGENT_A, json } from './helpers.ts';

type Exported = { agent_id: string; entries: Array<{ key: string; value: unknown }>; count: number };

describe('agent KV memory export/import', () => {
  let k: TestKernel;
  before(async () => {
    k = await startTestKernel({ only: ['agents', 'memory', 'error-envelope'] });
  });
  after(() => k.stop());

  const spawn = async (name: string): Promise<string> => {
    const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: `name = "${name}"\n` } });
    assert.equal(res.status, 201, await res.clone().text());
    return (await json<{ agent_id: string }>(res)).agent_id;
  };
  const importKv = (id: string, body: unknown) => k.request(`/api/agents/${id}/memory/import`, { method: 'POST', json: body });

  test('import then export round trip; a plain object and an export document import too', async () => {
    const agent_id = await spawn('rememberer');
    let res = await importKv(agent_id, {
      entries: [
        { key: 'color', value: 'blue' },
        { key: 'n', value: { a: 1 } },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'imported', agent_id, count: 2 });
    assert.equal((await json(await importKv(agent_id, { pet: 'cat' }))).count, 1);
    const exported = await json<Exported>(await k.request(`/api/agents/${agent_id}/memory/export`));
    assert.equal(exported.count, 3);
    assert.deepEqual(Object.fromEntries(exported.entries.map((e) => [e.key, e.value])), { color: 'blue', n: { a: 1 }, pet: 'cat' });
    // The same pairs are the memory module's own KV of that agent.
    assert.deepEqual(await json(await k.request(`/api/memory/agents/${agent_id}/kv/color`)), { key: 'color', value: 'blue' });

    const copy = await spawn('copy');
    assert.equal((await json(await importKv(copy, exported))).count, 3);
    assert.equal((await json(await importKv(copy, { kv_pairs: [{ key: 'x', value: 1 }] }))).count, 1);
  });

  test('bad entries → 400; a malformed id → 400; an unknown agent → 404', async () => {
    const agent_id = await spawn('strict');
    assert.equal((await importKv(agent_id, { entries: [{ value: 1 }] })).status, 400);
    assert.equal((await importKv(agent_id, { entries: [{ key: 'bad key', value: 1 }] })).status, 400);
    assert.equal((await k.request('/api/agents/not-a-uuid/memory/export')).status, 400);
    const missing = await k.request(`/api/agents/${AGENT_A}/memory/export`);
    assert.equal(missing.status, 404);
    assert.match((await json<{ error: string }>(missing)).error, /Agent .* not found/);
    assert.equal((await importKv(AGENT_A, { pet: 'cat' })).status, 404);
  });
});

test('without the agents module the routes answer 503', async () => {
  const k = await startTestKernel({ only: ['memory', 'error-envelope'] });
  try {
    const res = await k.request(`/api/agents/${AGENT_A}/memory/export`);
    assert.equal(res.status, 503);
    assert.match((await json<{ error: string }>(res)).error, /agents module is not running/);
  } finally {
    await k.stop();
  }
});
