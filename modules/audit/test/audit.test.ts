import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, waitFor, setConfig, type AgentTestKernel } from '@talon/testing';

const KEY = 's3cret-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };
const MANIFEST = `name = "auditee"\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ["file_write", "file_list"]\n`;

let k: AgentTestKernel;

interface Entry {
  id: number;
  timestamp: string;
  event_type: string;
  agent_id: string | null;
  details: string;
  outcome: string;
  hash: string;
  prev_hash: string;
}

before(async () => {
  k = await startAgentTestKernel({ only: ['audit', 'auth', 'agents', 'tools', 'error-envelope', 'config-api'], config: `api_key = "${KEY}"` });
});
after(async () => {
  await k?.stop();
});

const get = async <T>(path: string): Promise<T> => {
  const res = await k.request(path, { headers: auth });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return (await res.json()) as T;
};
const recent = (query = '') => get<{ entries: Entry[]; total: number }>(`/api/audit/recent${query}`);
const ofType = async (type: string) => (await recent(`?limit=500&event_type=${type}`)).entries;

test('a spawn, a turn with tool calls inside it, and a kill are each an entry', async () => {
  const spawned = await k.request('/api/agents', { method: 'POST', headers: auth, json: { manifest_toml: MANIFEST } });
  assert.equal(spawned.status, 201);
  const { agent_id: id } = (await spawned.json()) as { agent_id: string };
  k.fake.enqueue(
    {
      toolCalls: [
        { name: 'file_write', input: { path: 'a.txt', content: 'x' } },
        { name: 'file_list', input: { path: '.' } },
      ],
      usage: { input: 11, output: 7 },
    },
    { text: 'done', usage: { input: 5, output: 3 } },
  );
  const turn = await k.request(`/api/agents/${id}/message`, { method: 'POST', headers: auth, json: { message: 'write it' } });
  assert.equal(turn.status, 200);
  assert.equal((await k.request(`/api/agents/${id}`, { method: 'DELETE', headers: auth })).status, 200);

  await waitFor(async () => (await ofType('agent_killed')).length === 1, 5000);
  const [spawn] = await ofType('agent_spawned');
  assert.equal(spawn.agent_id, id);
  assert.equal(JSON.parse(spawn.details).name, 'auditee');
  const tools = (await ofType('tool_invoked')).filter((e) => e.agent_id === id);
  assert.deepEqual(tools.map((e) => JSON.parse(e.details).tool).sort(), ['file_list', 'file_write']);
  assert.ok(tools.every((e) => e.outcome === 'ok' && JSON.parse(e.details).turn_id));
  const [message] = await ofType('agent_message');
  assert.equal(message.agent_id, id);
  assert.deepEqual([JSON.parse(message.details).tokens_in, JSON.parse(message.details).tokens_out], [16, 10]);
});

test('refused requests and configuration changes are entries; values are never recorded', async () => {
  assert.equal((await k.request('/api/audit/recent')).status, 401);
  await setConfig(k, 'log_level', 'silent');
  await waitFor(async () => (await ofType('auth_failed')).length > 0 && (await ofType('config_changed')).length > 0, 5000);
  const [failed] = await ofType('auth_failed');
  assert.equal(failed.outcome, 'denied');
  assert.equal(JSON.parse(failed.details).url, '/api/audit/recent');
  const [changed] = await ofType('config_changed');
  assert.deepEqual(JSON.parse(changed.details), { keys: ['log_level'] });
});

test('module start-up is recorded', async () => {
  const loaded = await ofType('module_loaded');
  assert.ok(loaded.some((e) => JSON.parse(e.details).module === 'agents'));
});

test('recent: newest first, limit default 50 and max 500, total counts them all', async () => {
  const all = await recent();
  assert.ok(all.entries.length <= 50);
  assert.ok(all.total >= all.entries.length);
  for (let i = 1; i < all.entries.length; i++) assert.ok(all.entries[i - 1].id > all.entries[i].id);
  const two = await recent('?limit=2');
  assert.equal(two.entries.length, 2);
  assert.deepEqual(Object.keys(two.entries[0]).sort(), ['agent_id', 'details', 'event_type', 'hash', 'id', 'outcome', 'prev_hash', 'timestamp']);
  for (const bad of ['?limit=0', '?limit=-3', '?limit=abc', '?limit=2.5', '?n=many', '?bogus=1']) {
    const res = await k.request(`/api/audit/recent${bad}`, { headers: auth });
    assert.equal(res.status, 400, bad);
    assert.equal(typeof ((await res.json()) as { error: unknown }).error, 'string');
  }
  const alias = await get<{ entries: Entry[] }>('/api/audit/logs?limit=3');
  assert.equal(alias.entries.length, 3);
});

test('recent: a limit above 500 is capped at 500, not refused (limit and n alike)', async () => {
  // Each refused request is an entry: more than 500 of them make a cap visible.
  const refused = await Promise.all(Array.from({ length: 520 }, () => k.request('/api/agents')));
  assert.ok(refused.every((r) => r.status === 401));
  await waitFor(async () => (await recent()).total > 520, 5000);
  for (const query of ['?limit=1000', '?limit=501', '?n=100000']) {
    const page = await recent(query);
    assert.equal(page.entries.length, 500, query);
    assert.ok(page.total > 500, query);
  }
  assert.equal((await recent('?limit=500')).entries.length, 500);
  assert.equal((await get<{ entries: Entry[] }>('/api/audit/logs?limit=9999')).entries.length, 500);
});

test('recent pages back with before=<id>: the next page starts below the last id, and total stays the whole count', async () => {
  const first = await recent('?limit=3');
  const next = await recent(`?limit=3&before=${first.entries[2].id}`);
  assert.equal(next.entries.length, 3);
  assert.ok(next.entries.every((e) => e.id < first.entries[2].id));
  assert.equal(next.entries[0].id, (await recent('?limit=4')).entries[3].id);
  assert.equal(next.total, first.total);
  const typed = await recent(`?event_type=module_loaded&limit=1&before=${first.entries[2].id}`);
  assert.ok(typed.entries.every((e) => e.event_type === 'module_loaded'));
  for (const bad of ['?before=0', '?before=x']) assert.equal((await k.request(`/api/audit/recent${bad}`, { headers: auth })).status, 400, bad);
});

test('verify: the untouched chain is valid, with its ends', async () => {
  const report = await get<{ status: string; chain_length: number; first_entry: Entry; last_entry: Entry }>('/api/audit/verify');
  assert.equal(report.status, 'valid');
  assert.ok(report.chain_length > 5);
  assert.equal(report.first_entry.id, 1);
  assert.equal(report.first_entry.prev_hash, '0'.repeat(64));
  assert.equal(report.last_entry.id, report.chain_length);
});
