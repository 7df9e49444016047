import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { call, createJob, job, spawn, startEnv, stopEnv, type Env, type Job } from './helpers.ts';

type Json = Record<string, unknown>;
const HOUR = 3_600_000;

describe('scheduler: /api/schedules and /api/cron/jobs', () => {
  let env: Env;
  let agent: string;
  before(async () => {
    env = await startEnv();
    agent = await spawn(env.k, 'clock');
  });
  after(() => stopEnv(env));

  test('POST /api/schedules → 201 with the record; next_run is computed in the time zone', async () => {
    const res = await call<Job>(env.k, '/api/schedules', {
      method: 'POST',
      json: { agent_id: agent, cron: '0 9 * * *', tz: 'Asia/Tokyo', prompt: 'Morning report', enabled: true },
    });
    assert.equal(res.status, 201);
    const j = res.body;
    for (const key of [
      'id',
      'name',
      'agent_id',
      'cron',
      'tz',
      'prompt',
      'enabled',
      'next_run',
      'last_run',
      'last_status',
      'consecutive_failures',
      'auto_disabled',
      'created_at',
    ]) {
      assert.ok(key in j, key);
    }
    assert.equal(j.agent_id, agent);
    assert.equal(j.cron, '0 9 * * *');
    assert.equal(j.prompt, 'Morning report');
    assert.equal(j.name, 'clock 0 9 * * *');
    assert.equal(j.last_run, null);
    // 09:00 in Tokyo is 00:00 UTC.
    assert.match(String(j.next_run), /T00:00:00\.000Z$/);
    assert.ok(Date.parse(j.next_run!) > Date.now() && Date.parse(j.next_run!) <= Date.now() + 24 * HOUR);
  });

  test('the reference spellings: message for prompt, agent by name, schedule objects on /api/cron/jobs', async () => {
    const s = (await call<Job>(env.k, '/api/schedules', { method: 'POST', json: { agent_id: 'clock', cron: 'every 5m', message: 'check', name: 'poll' } }))
      .body;
    assert.deepEqual([s.prompt, s.message, s.agent_id, s.kind], ['check', 'check', agent, 'every']);
    const cron = await call<{ job_id: string; status: string; job: Job }>(env.k, '/api/cron/jobs', {
      method: 'POST',
      json: {
        name: 'weekday',
        agent_id: agent,
        schedule: { kind: 'cron', expr: '30 8 * * 1-5', tz: 'Europe/Paris' },
        action: { kind: 'agent_turn', message: 'go' },
      },
    });
    assert.equal(cron.status, 201);
    assert.equal(cron.body.status, 'created');
    assert.deepEqual([cron.body.job.schedule, cron.body.job.tz, cron.body.job.prompt], ['30 8 * * 1-5', 'Europe/Paris', 'go']);
    const every = (
      await call<{ job: Job }>(env.k, '/api/cron/jobs', { method: 'POST', json: { name: 'e', agent_id: agent, schedule: { kind: 'every', every_secs: 90 } } })
    ).body.job;
    assert.equal(every.schedule, 'every 90s');
    const at = new Date(Date.now() + HOUR).toISOString();
    const once = (
      await call<{ job: Job }>(env.k, '/api/cron/jobs', { method: 'POST', json: { name: 'o', agent_id: agent, schedule: { kind: 'at', at }, prompt: 'once' } })
    ).body.job;
    assert.equal(once.next_run, at);
    assert.equal(once.kind, 'at');
  });

  test('bad schedules → 400 at create and at update (impossible dates, seconds fields, unknown zones, short intervals, the past)', async () => {
    const base = { agent_id: agent, prompt: 'x' };
    const cases: Array<[Json, number, RegExp]> = [
      [{ ...base }, 400, /cron \(or schedule\) is required/],
      [{ ...base, cron: '0 0 30 2 *' }, 400, /no future fire time/],
      [{ ...base, cron: '0 0 31 4 *' }, 400, /no future fire time/],
      [{ ...base, cron: '* * * * * *' }, 400, /invalid cron expression/],
      [{ ...base, cron: '61 * * * *' }, 400, /invalid cron expression/],
      [{ ...base, cron: 'whenever' }, 400, /invalid cron expression 'whenever': it has 1 field, a cron expression has 5; a schedule is a 5-field cron/],
      [{ ...base, cron: '61 * * * *' }, 400, /every <n><unit>" with the unit s, m, h or d/],
      [{ ...base, cron: 'every 99 blorps' }, 400, /^'every 99 blorps' is not an interval: write "every <n><unit>" with the unit s, m, h or d/],
      [{ ...base, cron: 'every 0m' }, 400, /the number must be at least 1/],
      [{ ...base, cron: 'every 400d' }, 400, /longer than 366 days: use a cron expression/],
      [{ ...base, schedule: { kind: 'every', every_secs: 1e12 } }, 400, /longer than 366 days/],
      [{ ...base, cron: '0 9 * * *', tz: 'Mars/Olympus' }, 400, /unknown time zone/],
      [{ ...base, cron: 'every 2s' }, 400, /shortest interval/],
      [{ ...base, cron: 'at 2020-01-01T00:00:00Z' }, 400, /in the past/],
      [{ ...base, cron: 'at soon' }, 400, /ISO 8601/],
      [{ cron: '0 9 * * *', prompt: 'x' }, 400, /agent_id/],
      [{ ...base, agent_id: 'nobody', cron: '0 9 * * *' }, 404, /agent 'nobody' not found/],
      [{ ...base, cron: '0 9 * * *', colour: 1 }, 400, /unknown property 'colour'/],
      [{ ...base, cron: '0 9 * * *', schedule: '0 10 * * *' }, 400, /not both/],
      [{ ...base, cron: '0 9 * * *', misfire_policy: 'sometimes' }, 400, /misfire_policy|allowed/],
    ];
    for (const [json, status, error] of cases) {
      const res = await call<{ error: string }>(env.k, '/api/schedules', { method: 'POST', json });
      assert.equal(res.status, status, JSON.stringify(json));
      assert.match(res.body.error, error, JSON.stringify(json));
    }
    const j = await createJob(env.k, { agent_id: agent, cron: '0 9 * * *' });
    for (const path of [`/api/schedules/${j.id}`, `/api/cron/jobs/${j.id}`]) {
      const res = await call<{ error: string }>(env.k, path, { method: 'PUT', json: { cron: '0 0 30 2 *' } });
      assert.equal(res.status, 400);
      assert.match(res.body.error, /no future fire time/);
    }
    const bad = await call(env.k, '/api/cron/jobs', { method: 'POST', json: { agent_id: agent, schedule: { kind: 'cron' } } });
    assert.equal(bad.status, 400);
  });

  test('one store: a job made through either view is in both; GET/PUT/DELETE answer 404 for unknown and 400 for malformed ids', async () => {
    const s = await createJob(env.k, { agent_id: agent, cron: '15 * * * *', name: 'from-schedules' });
    const c = (
      await call<{ job_id: string }>(env.k, '/api/cron/jobs', { method: 'POST', json: { agent_id: agent, schedule: '45 * * * *', name: 'from-cron' } })
    ).body;
    const schedules = (await call<{ items: Job[]; total: number }>(env.k, '/api/schedules')).body;
    const cronJobs = (await call<{ jobs: Job[]; total: number }>(env.k, '/api/cron/jobs')).body;
    for (const id of [s.id, c.job_id]) {
      assert.ok(schedules.items.some((j) => j.id === id));
      assert.ok(cronJobs.jobs.some((j) => j.id === id));
    }
    assert.equal(cronJobs.total, cronJobs.jobs.length);
    assert.ok((await call<{ jobs: Job[] }>(env.k, `/api/cron/jobs?agent_id=${agent}`)).body.jobs.length >= 2);
    assert.equal((await call(env.k, '/api/cron/jobs?agent_id=nope')).status, 400);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const base of ['/api/schedules', '/api/cron/jobs']) {
      assert.equal((await call(env.k, `${base}/${unknown}`)).status, 404);
      assert.equal((await call(env.k, `${base}/nope`)).status, 400);
      assert.equal((await call(env.k, `${base}/${unknown}`, { method: 'PUT', json: { prompt: 'x' } })).status, 404);
      assert.equal((await call(env.k, `${base}/${unknown}`, { method: 'DELETE' })).status, 404);
    }
    assert.equal((await call(env.k, `/api/cron/jobs/${unknown}/status`)).status, 404);
    assert.equal((await call(env.k, `/api/cron/jobs/${unknown}/enable`, { method: 'PUT', json: { enabled: true } })).status, 404);
    assert.equal((await call(env.k, `/api/schedules/${unknown}/run`, { method: 'POST' })).status, 404);
    assert.deepEqual((await call(env.k, `/api/schedules/${s.id}`, { method: 'DELETE' })).body, { status: 'removed', schedule_id: s.id });
    assert.deepEqual((await call(env.k, `/api/cron/jobs/${c.job_id}`, { method: 'DELETE' })).body, { status: 'deleted', job_id: c.job_id });
    assert.equal((await call(env.k, `/api/cron/jobs/${c.job_id}`)).status, 404);
  });

  test('PUT changes what it is sent: a new schedule gets a new next_run; prompt and agent change; an empty body is a 400', async () => {
    const j = await createJob(env.k, { agent_id: agent, cron: '0 9 * * *', prompt: 'old' });
    const other = await spawn(env.k, 'other-clock');
    const res = await call<Job>(env.k, `/api/cron/jobs/${j.id}`, { method: 'PUT', json: { schedule: '0 18 * * *', prompt: 'new', agent_id: other } });
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.schedule, res.body.prompt, res.body.agent_id, res.body.tz], ['0 18 * * *', 'new', other, 'UTC']);
    assert.match(String(res.body.next_run), /T18:00:00\.000Z$/);
    const tz = await call<Job>(env.k, `/api/schedules/${j.id}`, { method: 'PUT', json: { tz: 'America/New_York' } });
    assert.equal(tz.body.cron, '0 18 * * *');
    assert.match(String(tz.body.next_run), /T23:00:00\.000Z$/);
    assert.equal((await call(env.k, `/api/schedules/${j.id}`, { method: 'PUT', json: {} })).status, 400);
  });

  test('PUT …/enable toggles (no body means true); status gives the last result and the next time', async () => {
    const j = await createJob(env.k, { agent_id: agent, cron: '0 9 * * *' });
    let res = await call<Json>(env.k, `/api/cron/jobs/${j.id}/enable`, { method: 'PUT', json: { enabled: false } });
    assert.deepEqual(res.body, { id: j.id, enabled: false, next_run: null });
    assert.equal((await job(env.k, j.id)).enabled, false);
    res = await call<Json>(env.k, `/api/cron/jobs/${j.id}/enable`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '' });
    assert.equal(res.body.enabled, true);
    assert.equal(res.body.next_run, j.next_run);
    assert.equal((await call(env.k, `/api/cron/jobs/${j.id}/enable`, { method: 'PUT', json: { enabled: 'yes' } })).status, 400);
    const status = (await call<Json>(env.k, `/api/cron/jobs/${j.id}/status`)).body;
    assert.deepEqual(Object.keys(status).sort(), [
      'auto_disabled',
      'consecutive_failures',
      'disabled_reason',
      'enabled',
      'id',
      'last_error',
      'last_result',
      'last_run',
      'last_status',
      'name',
      'next_run',
      'run_count',
    ]);
  });

  test('POST /api/schedules/{id}/run runs now and answers the outcome; the schedule stays; a failure answers status failed', async () => {
    const j = await createJob(env.k, { agent_id: agent, cron: '0 9 * * *', prompt: 'do it now', enabled: false });
    env.fake.enqueue({ text: 'done now' });
    const res = await call<Json>(env.k, `/api/schedules/${j.id}/run`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'completed', schedule_id: j.id, agent_id: agent, workflow_id: null, response: 'done now' });
    const after = await job(env.k, j.id);
    assert.equal(after.enabled, false);
    assert.equal(after.next_run, null);
    assert.equal(after.last_status, 'ok');
    assert.equal(after.last_result, 'done now');
    env.fake.enqueue({ status: 500 });
    const failed = await call<Json>(env.k, `/api/schedules/${j.id}/run`, { method: 'POST' });
    assert.equal(failed.status, 200);
    assert.equal(failed.body.status, 'failed');
    assert.match(String(failed.body.error), /500|provider|LLM/i);
    assert.equal((await job(env.k, j.id)).consecutive_failures, 0, 'manual runs do not count towards auto-disable');
    // Both are in the run history, as manual runs (no slot), newest first, with the node that ran them.
    const history = (await call<Json[]>(env.k, `/api/schedules/${j.id}/runs`)).body;
    assert.deepEqual(
      history.map((r) => [r.manual, r.slot, r.state, r.node]),
      [
        [true, null, 'error', env.k.kernel.nodes.id],
        [true, null, 'ok', env.k.kernel.nodes.id],
      ],
    );
    assert.match(String(history[0].error), /500|provider|LLM/i);
    assert.ok(history[1].finished_at);
  });

  test('killing an agent disables its jobs, saying why; PUT agent_id and enable bring them back', async () => {
    const doomed = await spawn(env.k, 'doomed');
    const j = await createJob(env.k, { agent_id: doomed, cron: '0 9 * * *' });
    await call(env.k, `/api/agents/${doomed}`, { method: 'DELETE' });
    const off = await waitFor(
      async () => {
        const x = await job(env.k, j.id);
        return x.enabled ? undefined : x;
      },
      3000,
      'disabled',
    );
    assert.match(String(off!.disabled_reason), /agent 'doomed' .* was killed/);
    const back = (await call<Job>(env.k, `/api/schedules/${j.id}`, { method: 'PUT', json: { agent_id: agent, enabled: true } })).body;
    assert.deepEqual([back.enabled, back.agent_id, back.disabled_reason], [true, agent, null]);
    assert.ok(back.next_run);
  });
});
