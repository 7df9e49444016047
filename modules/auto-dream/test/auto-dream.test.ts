import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
let agent: string;
before(async () => {
  k = await startTestKernel({ only: ['auto-dream', 'agents', 'memory', 'scheduler', 'error-envelope'] });
  const res = await k.request('/api/agents', {
    method: 'POST',
    json: { manifest_toml: 'name = "dreamer"\n[model]\nprovider = "default"\nmodel = "default"\n' },
  });
  agent = ((await res.json()) as { agent_id: string }).agent_id;
});
after(() => k?.stop());

interface Status {
  enabled: boolean;
  scheduler_available: boolean;
  agents: Array<{
    agent_id: string;
    auto_dream_enabled: boolean;
    last_consolidated_at: string | null;
    next_run_at: string | null;
    job_id: string | null;
    runs: number;
    progress: { status: string } | null;
  }>;
}
interface Job {
  id: string;
  agent_id: string;
  handler: string | null;
  enabled: boolean;
  next_run: string | null;
  last_status: string | null;
}
const status = async () => (await (await k.request('/api/auto-dream/status')).json()) as Status;
const schedules = async () => ((await (await k.request('/api/schedules')).json()) as { items: Job[] }).items;
const setEnabled = (enabled: boolean) => k.request(`/api/auto-dream/agents/${agent}/enabled`, { method: 'PUT', json: { enabled } });

test('off by default; an agent switched on gets a scheduler job every min_hours, which consolidates duplicates and is recorded', async () => {
  const first = await status();
  assert.deepEqual([first.enabled, first.scheduler_available], [false, true]);
  assert.deepEqual(
    first.agents.map((a) => [a.agent_id, a.auto_dream_enabled, a.next_run_at]),
    [[agent, false, null]],
  );
  assert.deepEqual(await schedules(), [], 'no job while it is off');
  assert.equal((await setEnabled(true)).status, 200);
  const on = (await status()).agents[0];
  const [job] = await schedules();
  assert.deepEqual([job.agent_id, job.handler, job.enabled, job.id], [agent, 'auto-dream.consolidate', true, on.job_id]);
  assert.equal(on.next_run_at, job.next_run, 'the next run is the scheduler job’s');
  assert.ok(Math.abs(Date.parse(on.next_run_at!) - (Date.now() + 24 * 3_600_000)) < 60_000, 'min_hours (24) from now');

  for (let i = 0; i < 2; i++) {
    await k.request('/api/memory', { method: 'POST', json: { content: 'The user prefers green tea in the morning.', agent_id: agent, level: 'agent' } });
  }
  // The scheduler runs the job (here at once): the consolidation happens there, and survives a reload of the scheduler.
  assert.equal((await k.kernel.reloadModule('scheduler')).ok, true);
  const ran = (await (await k.request(`/api/schedules/${job.id}/run`, { method: 'POST' })).json()) as { status: string; response: string };
  assert.equal(ran.status, 'completed', JSON.stringify(ran));
  assert.equal((JSON.parse(ran.response) as { merged_count: number }).merged_count, 1);
  const after = (await status()).agents[0];
  assert.deepEqual([after.runs, after.progress?.status], [1, 'completed']);
  assert.ok(after.last_consolidated_at);

  const fired = await k.request(`/api/auto-dream/agents/${agent}/trigger`, { method: 'POST' });
  assert.equal(((await fired.json()) as { fired: boolean }).fired, true);
  assert.equal((await status()).agents[0].runs, 2);

  // Its schedule may change through the API; what it runs may not.
  const retarget = await k.request(`/api/schedules/${job.id}`, { method: 'PUT', json: { prompt: 'do something else' } });
  assert.equal(retarget.status, 400);
  assert.match(((await retarget.json()) as { error: string }).error, /runs the module handler 'auto-dream.consolidate': prompt cannot change/);

  assert.equal((await setEnabled(false)).status, 200);
  assert.deepEqual([(await schedules())[0].enabled, (await status()).agents[0].next_run_at], [false, null]);
});

test('errors: bad and unknown agents, bad bodies', async () => {
  assert.equal((await k.request('/api/auto-dream/agents/nope/trigger', { method: 'POST' })).status, 400);
  assert.equal((await k.request(`/api/auto-dream/agents/${crypto.randomUUID()}/trigger`, { method: 'POST' })).status, 404);
  assert.equal((await k.request(`/api/auto-dream/agents/${agent}/enabled`, { method: 'PUT', json: {} })).status, 400);
});
