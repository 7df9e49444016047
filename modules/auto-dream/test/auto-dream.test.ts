import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';

let k: TestKernel;
let agent: string;
before(async () => {
  k = await startTestKernel({ only: ['auto-dream', 'agents', 'memory', 'error-envelope'] });
  const res = await k.request('/api/agents', {
    method: 'POST',
    json: { manifest_toml: 'name = "dreamer"\n[model]\nprovider = "default"\nmodel = "default"\n' },
  });
  agent = ((await res.json()) as { agent_id: string }).agent_id;
});
after(() => k?.stop());

interface Status {
  enabled: boolean;
  agents: Array<{
    agent_id: string;
    auto_dream_enabled: boolean;
    last_consolidated_at: string | null;
    next_run_at: string | null;
    runs: number;
    progress: { status: string } | null;
  }>;
}
const status = async () => (await (await k.request('/api/auto-dream/status')).json()) as Status;

test('off by default; an agent switched on gets a next run; a trigger consolidates duplicates and is recorded', async () => {
  const first = await status();
  assert.equal(first.enabled, false);
  assert.deepEqual(
    first.agents.map((a) => [a.agent_id, a.auto_dream_enabled, a.next_run_at]),
    [[agent, false, null]],
  );
  assert.equal((await k.request(`/api/auto-dream/agents/${agent}/enabled`, { method: 'PUT', json: { enabled: true } })).status, 200);
  assert.ok((await status()).agents[0].next_run_at);
  for (let i = 0; i < 2; i++) {
    await k.request('/api/memory', { method: 'POST', json: { content: 'The user prefers green tea in the morning.', agent_id: agent, level: 'agent' } });
  }
  const fired = await k.request(`/api/auto-dream/agents/${agent}/trigger`, { method: 'POST' });
  const body = (await fired.json()) as { fired: boolean; result: { merged_count: number } };
  assert.equal(body.fired, true);
  assert.equal(body.result.merged_count, 1);
  const after = (await status()).agents[0];
  assert.equal(after.runs, 1);
  assert.equal(after.progress?.status, 'completed');
  assert.ok(after.last_consolidated_at);
});

test('errors: bad and unknown agents, bad bodies', async () => {
  assert.equal((await k.request('/api/auto-dream/agents/nope/trigger', { method: 'POST' })).status, 400);
  assert.equal((await k.request(`/api/auto-dream/agents/${crypto.randomUUID()}/trigger`, { method: 'POST' })).status, 404);
  assert.equal((await k.request(`/api/auto-dream/agents/${agent}/enabled`, { method: 'PUT', json: {} })).status, 400);
});
