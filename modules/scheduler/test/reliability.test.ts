/**
 * Nothing stops the scheduler or the bus: an agent whose every turn fails, a trigger whose every fire fails, a bus
 * subscriber that never returns and one that always throws — the healthy job keeps firing on time and the healthy
 * trigger keeps firing on its events.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AGENT_TEST_KEY_ENV, waitFor } from '@talon/testing';
import { call, createJob, job, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

let env: Env;
before(async () => {
  env = await startEnv('[scheduler]\nmin_interval_secs = 1\n[triggers]\ncooldown_secs = 0\n', ['triggers', 'bad-subscribers']);
  env.fake.setFallback({ text: 'fine' });
});
after(() => stopEnv(env));

async function spawnBroken(name: string): Promise<string> {
  // Its provider address refuses connections: every turn of this agent fails.
  const manifest = `name = "${name}"\n[model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "${AGENT_TEST_KEY_ENV}"\n`;
  const res = await call<{ agent_id: string }>(env.k, '/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  assert.equal(res.status, 201);
  return res.body.agent_id;
}

test('a failing agent, a failing trigger and a hanging and a throwing subscriber never stop the scheduler or the bus', async () => {
  const healthy = await spawn(env.k, 'healthy');
  const broken = await spawnBroken('broken');
  const failingJob = await createJob(env.k, { agent_id: broken, cron: 'every 1s', prompt: 'fail' });
  // A trigger whose every fire fails (its agent cannot answer), on every scheduled run.
  const failingTrigger = (
    await call<{ trigger_id: string }>(env.k, '/api/triggers', {
      method: 'POST',
      json: { agent_id: broken, pattern: { event: { type: 'schedule.fired' } }, prompt_template: '{{event}}' },
    })
  ).body.trigger_id;
  const healthyTrigger = (
    await call<{ trigger_id: string }>(env.k, '/api/triggers', {
      method: 'POST',
      json: { agent_id: healthy, pattern: { custom: { event_type: 'beat' } }, prompt_template: 'beat' },
    })
  ).body.trigger_id;
  const goodJob = await createJob(env.k, { agent_id: healthy, cron: 'every 1s', prompt: 'tick' });

  await waitFor(async () => (await job(env.k, goodJob.id)).run_count >= 3, 8000, 'three healthy runs');
  const failing = await job(env.k, failingJob.id);
  assert.equal(failing.last_status, 'error');
  assert.ok((failing.consecutive_failures as number) >= 1);
  const failedFires = (await call<{ deliveries: Array<{ source_id: string; status: string }> }>(env.k, `/api/agents/${broken}/deliveries`)).body.deliveries;
  assert.ok(
    failedFires.some((d) => d.source_id === failingTrigger && d.status === 'failed'),
    'the failing trigger fired and failed',
  );

  // The bus still delivers: the healthy trigger fires on each new event.
  const count = async () => (await call<{ fire_count: number }>(env.k, `/api/triggers/${healthyTrigger}`)).body.fire_count;
  const scope = env.k.kernel.events.scope('test-publisher');
  for (let i = 0; i < 3; i++) scope.publish('custom', { type: 'beat', data: i });
  await waitFor(async () => (await count()) === 3, 5000, 'three healthy fires');

  const bad = (await call<{ hanging: number; throwing: number }>(env.k, '/api/test/bad-subscribers')).body;
  assert.equal(bad.hanging, 1, 'the hanging subscriber is stuck on its first event');
  assert.ok(bad.throwing > 10, 'the throwing subscriber got every event');
  const stats = env.k.kernel.events.stats();
  assert.ok(
    stats.some((s) => s.owner.startsWith('bad-subscribers') && s.dropped > 0),
    'the stuck queue overflows into counted drops',
  );
});
