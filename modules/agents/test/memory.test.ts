import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { json, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

describe('agents: KV memory export/import through the memory module', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ modules: ['memory'] });
  });
  after(() => stopEnv(env));

  test('import then export round trip; a plain object imports too; bad entries → 400; unknown agent → 404', async () => {
    const { agent_id } = await spawn(env.k, 'rememberer');
    let res = await env.k.request(`/api/agents/${agent_id}/memory/import`, {
      method: 'POST',
      json: {
        entries: [
          { key: 'color', value: 'blue' },
          { key: 'n', value: { a: 1 } },
        ],
      },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'imported', agent_id, count: 2 });
    res = await env.k.request(`/api/agents/${agent_id}/memory/import`, { method: 'POST', json: { pet: 'cat' } });
    assert.equal((await json(res)).count, 1);
    const exported = await json<{ entries: Array<{ key: string; value: unknown }>; count: number }>(
      await env.k.request(`/api/agents/${agent_id}/memory/export`),
    );
    assert.equal(exported.count, 3);
    assert.deepEqual(Object.fromEntries(exported.entries.map((e) => [e.key, e.value])), { color: 'blue', n: { a: 1 }, pet: 'cat' });
    const other = await spawn(env.k, 'copy');
    res = await env.k.request(`/api/agents/${other.agent_id}/memory/import`, { method: 'POST', json: exported });
    assert.equal((await json(res)).count, 3);
    res = await env.k.request(`/api/agents/${agent_id}/memory/import`, { method: 'POST', json: { entries: [{ value: 1 }] } });
    assert.equal(res.status, 400);
    assert.equal((await env.k.request('/api/agents/00000000-0000-4000-8000-000000000000/memory/export')).status, 404);
  });
});
