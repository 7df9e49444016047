import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, startTestKernel, waitFor, type AgentTestKernel, type TestKernel } from '@talon/testing';

let k: AgentTestKernel;
let off: AgentTestKernel;
let agent: string;

const config = (enabled: boolean) => ['[prompt_intelligence]', `enabled = ${enabled}`, 'max_versions_per_agent = 5'].join('\n');

before(async () => {
  const only = ['prompts', 'agents', 'error-envelope'];
  k = await startAgentTestKernel({ only, config: config(true) });
  // The second kernel shares the first one's provider.
  off = await startAgentTestKernel({ only, config: config(false), fake: k.fake });
  const res = await k.request('/api/agents', {
    method: 'POST',
    json: { manifest_toml: 'name = "poet"\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are the manifest prompt."\n' },
  });
  agent = ((await res.json()) as { agent_id: string }).agent_id;
});
after(async () => {
  await off?.stop();
  await k?.stop();
});

async function call<T = Record<string, unknown>>(
  path: string,
  init: { method?: string; json?: unknown } = {},
  kernel: TestKernel = k,
): Promise<{ status: number; body: T }> {
  const res = await kernel.request(path, { method: init.method ?? 'GET', json: init.json });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Sends one message; answers the system prompt the provider received. */
async function turn(text = 'hi', reply = 'ok'): Promise<string> {
  k.fake.enqueue({ text: reply });
  const res = await call(`/api/agents/${agent}/message`, { method: 'POST', json: { message: text } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const sent = k.fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
  return sent.find((m) => m.role === 'system')?.content ?? '';
}

const newSession = async () => assert.equal((await call(`/api/agents/${agent}/session/reset`, { method: 'POST' })).status, 200);

interface Version {
  id: string;
  version: number;
  is_active: boolean;
  content_hash: string;
  agent_id: string;
}

test('versions: saved with server numbers, listed newest first; activation really changes what the agent sends', async () => {
  assert.match(await turn(), /manifest prompt/);
  const v1 = await call<Version>(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: 'You are a PIRATE.', description: 'arr' } });
  assert.equal(v1.status, 201);
  assert.equal(v1.body.version, 1);
  assert.equal(v1.body.is_active, false);
  assert.match(v1.body.content_hash, /^[0-9a-f]{64}$/);
  const v2 = await call<Version>(`/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: 'You are a ROBOT.', version: 99 } });
  assert.equal(v2.body.version, 2);
  const list = await call<{ items: Version[]; total: number }>(`/api/agents/${agent}/prompts/versions`);
  assert.deepEqual(
    list.body.items.map((v) => v.version),
    [2, 1],
  );
  assert.match(await turn(), /manifest prompt/, 'a saved version changes nothing until activated');

  const active = await call<Version>(`/api/prompts/versions/${v1.body.id}/activate`, { method: 'POST', json: { agent_id: agent } });
  assert.equal(active.body.is_active, true);
  assert.match(await turn(), /^You are a PIRATE\./);
  await call(`/api/prompts/versions/${v2.body.id}/activate`, { method: 'POST' });
  assert.equal((await call<Version>(`/api/prompts/versions/${v1.body.id}`)).body.is_active, false);
  assert.match(await turn(), /^You are a ROBOT\./);

  assert.equal((await call(`/api/prompts/versions/${v2.body.id}`, { method: 'DELETE' })).status, 204);
  assert.equal((await call(`/api/prompts/versions/${v2.body.id}`)).status, 404);
  assert.match(await turn(), /manifest prompt/, 'deleting the active version puts the manifest prompt back');
});

test('versions: errors', async () => {
  assert.equal((await call(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: {} })).status, 400);
  assert.equal((await call('/api/agents/not-a-uuid/prompts/versions')).status, 400);
  assert.equal((await call(`/api/agents/${crypto.randomUUID()}/prompts/versions`)).status, 404);
  assert.equal((await call(`/agents/${crypto.randomUUID()}/prompts/versions`)).status, 404);
  assert.equal((await call('/api/prompts/versions/nope')).status, 400);
  assert.equal((await call(`/api/prompts/versions/${crypto.randomUUID()}/activate`, { method: 'POST' })).status, 404);
  const v = await call<Version>(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: 'x' } });
  const wrong = await call<{ error: string }>(`/api/prompts/versions/${v.body.id}/activate`, { method: 'POST', json: { agent_id: crypto.randomUUID() } });
  assert.equal(wrong.status, 404);
  // The cap: 5 versions per agent in this configuration.
  let last = 0;
  for (let i = 0; i < 6; i++) last = (await call(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: `p${i}` } })).status;
  assert.equal(last, 409);
  for (const item of (await call<{ items: Version[] }>(`/api/agents/${agent}/prompts/versions`)).body.items)
    await call(`/api/prompts/versions/${item.id}`, { method: 'DELETE' });
});

interface Experiment {
  id: string;
  status: string;
  traffic_split: number[];
  winner_variant_id: string | null;
  variants: Array<{ id: string; name: string; prompt_version_id: string }>;
}
interface Metrics {
  variants: Array<{ variant_id: string; impressions: number; wins: number; failures: number; avg_latency_ms: number; total_cost_usd: number }>;
}

test('experiments: arms sampled sticky per session, measured per arm, completed with the winner activated', async () => {
  const a = (await call<Version>(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: 'ARM-A prompt' } })).body;
  const b = (await call<Version>(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: 'ARM-B prompt' } })).body;
  const created = await call<Experiment>(`/api/agents/${agent}/prompts/experiments`, {
    method: 'POST',
    json: {
      name: 'tone',
      variants: [
        { name: 'a', prompt_version_id: a.id },
        { name: 'b', prompt_version_id: b.id },
      ],
    },
  });
  assert.equal(created.status, 201);
  assert.equal(created.body.status, 'draft');
  assert.deepEqual(created.body.traffic_split, [50, 50]);
  const id = created.body.id;
  assert.match(await turn(), /manifest prompt/, 'a draft samples nothing');
  assert.equal((await call<Experiment>(`/api/prompts/experiments/${id}/start`, { method: 'POST' })).body.status, 'running');

  // Sessions are random: as many as it takes for both arms to show (at least 8; 40 would fail once in 2^39 runs).
  const seen = new Set<string>();
  let sessions = 0;
  for (let s = 0; s < 40 && (s < 8 || seen.size < 2); s++, sessions++) {
    await newSession();
    const first = await turn();
    const again = await turn('second', s % 2 ? '' : 'fine');
    assert.equal(first.slice(0, 5), again.slice(0, 5), 'the same session keeps its arm');
    seen.add(first.slice(0, 5));
  }
  assert.deepEqual([...seen].sort(), ['ARM-A', 'ARM-B'], 'the sessions reach both arms');
  const metrics = (await call<Metrics>(`/api/prompts/experiments/${id}/metrics`)).body;
  assert.equal(
    metrics.variants.reduce((n, v) => n + v.impressions, 0),
    2 * sessions,
  );
  // Empty answers (every other session's second turn) are no wins.
  assert.equal(
    metrics.variants.reduce((n, v) => n + v.wins, 0),
    2 * sessions - Math.floor(sessions / 2),
  );
  for (const v of metrics.variants) assert.equal(v.failures, v.impressions - v.wins);

  assert.equal((await call<Experiment>(`/api/prompts/experiments/${id}/pause`, { method: 'POST' })).body.status, 'paused');
  assert.match(await turn(), /manifest prompt/, 'a paused experiment samples nothing');
  assert.equal((await call(`/api/prompts/experiments/${id}/pause`, { method: 'POST' })).status, 409);
  const done = await call<Experiment>(`/api/prompts/experiments/${id}/complete`, { method: 'POST', json: { winner_variant_id: created.body.variants[1].id } });
  assert.equal(done.body.status, 'completed');
  assert.equal(done.body.winner_variant_id, created.body.variants[1].id);
  assert.equal((await call<Version>(`/api/prompts/versions/${b.id}`)).body.is_active, true);
  assert.match(await turn(), /^ARM-B prompt/);
  assert.equal((await call(`/api/prompts/experiments/${id}/start`, { method: 'POST' })).status, 409);
  const list = await call<{ items: Experiment[] }>(`/api/agents/${agent}/prompts/experiments`);
  assert.equal(list.body.items[0].id, id);
});

test('experiments: errors', async () => {
  const v = (await call<Version>(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: 'e' } })).body;
  const bad = [
    {},
    { name: 'x', variants: [{ name: 'only', prompt_version_id: v.id }] },
    {
      name: 'x',
      variants: [
        { name: 'a', prompt_version_id: v.id },
        { name: 'b', prompt_version_id: v.id },
      ],
      traffic_split: [50, 40],
    },
    {
      name: 'x',
      variants: [
        { name: 'a', prompt_version_id: v.id },
        { name: 'b', prompt_version_id: 'nope' },
      ],
    },
  ];
  for (const json of bad) assert.equal((await call(`/api/agents/${agent}/prompts/experiments`, { method: 'POST', json })).status, 400, JSON.stringify(json));
  assert.equal((await call(`/api/prompts/experiments/${crypto.randomUUID()}`)).status, 404);
  assert.equal((await call(`/api/prompts/experiments/${crypto.randomUUID()}/metrics`)).status, 404);
  assert.equal((await call('/api/prompts/experiments/bad-id/start', { method: 'POST' })).status, 400);
});

test('off: every route answers 404 saying how to enable it, and prompts are left alone', async () => {
  const res = await call<{ error: string }>(`/api/prompts/versions/${crypto.randomUUID()}`, {}, off);
  assert.equal(res.status, 404);
  assert.match(res.body.error, /\[prompt_intelligence\]/);
  assert.equal((await call(`/api/prompts/experiments/${crypto.randomUUID()}/metrics`, {}, off)).status, 404);
});

test("a version activated by another process on the same home is what this one's next turns send (the cache follows the change feed)", async () => {
  const other = await startTestKernel({ only: ['prompts', 'agents', 'llm-openai', 'error-envelope'], home: k.home });
  try {
    const v = (await call<Version>(`/api/agents/${agent}/prompts/versions`, { method: 'POST', json: { system_prompt: 'ELSEWHERE prompt' } })).body;
    assert.equal((await call<Version>(`/api/prompts/versions/${v.id}/activate`, { method: 'POST' }, other)).body.is_active, true);
    await waitFor(async () => (await turn()).startsWith('ELSEWHERE prompt'), 3000, 'the version activated in the other process');
  } finally {
    await other.stop();
  }
});
