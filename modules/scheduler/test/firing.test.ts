import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, openKernelStore, waitFor } from '@talon/testing';
import { call, createJob, job, spawn, startEnv, startKernel, stopEnv, type Env } from './helpers.ts';

const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('scheduler: jobs fire on their own', () => {
  let env: Env;
  let agent: string;
  before(async () => {
    env = await startEnv('[scheduler]\nmin_interval_secs = 1\nmax_consecutive_failures = 2\nfailure_backoff_secs = 0\n', ['triggers']);
    agent = await spawn(env.k, 'ticker');
  });
  after(() => stopEnv(env));

  test('an interval job fires each slot as a turn with origin schedule; the reply goes to the deliveries; schedule.fired is published', async () => {
    env.fake.setFallback({ text: 'tick' });
    const j = await createJob(env.k, { agent_id: agent, cron: 'every 1s', prompt: 'tick?' });
    const fired = await waitFor(async () => ((await job(env.k, j.id)).run_count >= 2 ? job(env.k, j.id) : undefined), 5000, 'two runs');
    assert.equal(fired!.last_status, 'ok');
    assert.equal(fired!.last_result, 'tick');
    assert.ok(fired!.last_run);
    const deliveries = (await call<{ deliveries: Array<{ source: string; source_id: string; status: string }> }>(env.k, `/api/agents/${agent}/deliveries`)).body
      .deliveries;
    assert.ok(deliveries.some((d) => d.source === 'schedule' && d.source_id === j.id && d.status === 'kept'));
    const event = env.events.find((e) => e.type === 'schedule.fired' && e.data.jobId === j.id);
    assert.deepEqual(event?.data, { jobId: j.id, name: j.name, agentId: agent, status: 'ok' });
    assert.ok(env.events.some((e) => e.type === 'message.received' && e.data.origin === 'schedule'));
    await call(env.k, `/api/schedules/${j.id}`, { method: 'DELETE' });
  });

  test('failures back off and, after max_consecutive_failures in a row, the job disables itself (visible in the status)', async () => {
    env.fake.setFallback({ status: 500 });
    const j = await createJob(env.k, { agent_id: agent, cron: 'every 1s', prompt: 'fail' });
    const status = await waitFor(
      async () => {
        const s = (await call<Record<string, unknown>>(env.k, `/api/cron/jobs/${j.id}/status`)).body;
        return s.auto_disabled ? s : undefined;
      },
      6000,
      'auto-disable',
    );
    assert.equal(status!.enabled, false);
    assert.equal(status!.consecutive_failures, 2);
    assert.equal(status!.last_status, 'error');
    assert.equal(status!.next_run, null);
    assert.match(String(status!.disabled_reason), /disabled after 2 consecutive failures/);
    // Enabling clears the failure state.
    env.fake.setFallback({ text: 'fine' });
    const back = (await call<Record<string, unknown>>(env.k, `/api/cron/jobs/${j.id}/enable`, { method: 'PUT', json: { enabled: true } })).body;
    assert.equal(back.enabled, true);
    const s = (await call<Record<string, unknown>>(env.k, `/api/cron/jobs/${j.id}/status`)).body;
    assert.deepEqual([s.auto_disabled, s.consecutive_failures, s.disabled_reason], [false, 0, null]);
    await call(env.k, `/api/schedules/${j.id}`, { method: 'DELETE' });
  });

  test('a slot that comes while the previous run is still going is skipped, saying so: runs never pile up', async () => {
    const slow = await spawn(env.k, 'slowpoke');
    env.fake.setFallback({ text: 'late', delayMs: 3500 });
    const before = env.fake.requests.length;
    const j = await createJob(env.k, { agent_id: slow, cron: 'every 1s', prompt: 'slow tick' });
    await waitFor(() => env.fake.requests.length > before, 5000, 'the first run');
    const status = (await waitFor(
      async () => {
        const s = (await call<Record<string, unknown>>(env.k, `/api/cron/jobs/${j.id}/status`)).body;
        return s.last_status === 'skipped' ? s : undefined;
      },
      3000,
      'a slot skipped while the first run goes on',
    ))!;
    assert.equal(env.fake.requests.length - before, 1, 'one run at a time');
    assert.equal(status.last_status, 'skipped');
    assert.match(String(status.last_error), /previous run was still going/);
    await call(env.k, `/api/schedules/${j.id}`, { method: 'DELETE' });
    env.fake.setFallback({ text: 'ok' });
  });

  test('a one-shot at job runs once and then stays disabled', async () => {
    env.fake.setFallback({ text: 'once' });
    const at = new Date(Date.now() + 1200).toISOString();
    const j = await createJob(env.k, { agent_id: agent, cron: `at ${at}`, prompt: 'one time' });
    const done = await waitFor(async () => ((await job(env.k, j.id)).run_count === 1 ? job(env.k, j.id) : undefined), 5000, 'the run');
    assert.deepEqual([done!.enabled, done!.next_run, done!.last_status], [false, null, 'ok']);
    // Nothing is left to happen: a while past the slot, it has still run once.
    await sleep(500);
    assert.equal((await job(env.k, j.id)).run_count, 1);
  });
});

describe('scheduler: a job due while the service was down', () => {
  const fake = new FakeProvider();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-sched-misfire-'));
  after(async () => {
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  });

  /** Creates an hourly job, stops the service, moves next_run `missed` hours back (the downtime), starts again. */
  async function afterDowntime(policy: string | null, missed: number): Promise<{ runs: number; job: Record<string, unknown> }> {
    let { k } = await startKernel(fake, { home, config: '[scheduler]\nmisfire_grace_secs = 60\n' });
    const agent = (await call<Array<{ id: string; name: string }>>(k, '/api/agents')).body.find((a) => a.name === 'sleeper')?.id ?? (await spawn(k, 'sleeper'));
    const j = await createJob(k, { agent_id: agent, cron: '0 * * * *', prompt: 'hourly', misfire_policy: policy });
    await k.stop();
    const db = await openKernelStore(k);
    const slot = Math.floor(Date.now() / HOUR) * HOUR;
    await db.store.run('UPDATE scheduler_jobs SET next_run = ? WHERE id = ?', [slot - (missed - 1) * HOUR, j.id]);
    await db.close();
    ({ k } = await startKernel(fake, { home }));
    try {
      // The first tick after the start plans the next slot and claims the missed runs in one write; each run ends in
      // another. Caught up: the next slot is planned and no run is left (read in one statement, one snapshot).
      const caughtUp = `SELECT CASE WHEN (SELECT next_run FROM scheduler_jobs WHERE id = ?) = ?
        AND NOT EXISTS (SELECT 1 FROM scheduler_runs WHERE job_id = ? AND state = 'running') THEN 1 ELSE 0 END AS done`;
      await waitFor(async () => (await k.kernel.store.one<{ done: number }>(caughtUp, [j.id, slot + HOUR, j.id]))?.done === 1, 5000, 'the catch-up');
      const after = (await call<Record<string, unknown>>(k, `/api/schedules/${j.id}`)).body;
      assert.equal(after.next_run, new Date(slot + HOUR).toISOString(), 'the next slot after now');
      return { runs: after.run_count as number, job: after };
    } finally {
      await call(k, `/api/schedules/${j.id}`, { method: 'DELETE' });
      await k.stop();
    }
  }

  before(async () => {
    await fake.start();
    fake.setFallback({ text: 'caught up' });
  });

  test('fires once after the restart by default, however many slots were missed — never twice', async () => {
    const { runs, job } = await afterDowntime(null, 3);
    assert.equal(runs, 1);
    assert.equal(job.last_status, 'ok');
  });

  test("misfire_policy 'all' runs each missed slot; 'skip' runs none and says so", async () => {
    assert.equal((await afterDowntime('all', 3)).runs, 3);
    const skipped = await afterDowntime('skip', 3);
    assert.equal(skipped.runs, 0);
    assert.equal(skipped.job.last_status, 'skipped');
    assert.match(String(skipped.job.last_error), /missed while the service was down/);
  });
});
