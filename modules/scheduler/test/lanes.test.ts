/**
 * A scheduled workflow holds no 'schedule' lane slot while its steps wait for 'workflow' slots: more long scheduled
 * workflows than the schedule lane has slots (their steps stuck behind a workflow lane of one) never stop an ordinary
 * cron job, an agent turn, from firing on time.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AGENT_TEST_KEY_ENV, startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import { call, createJob, job } from './helpers.ts';

const SCHEDULE_LANE = 2;
let k: AgentTestKernel;
/** A model endpoint that never answers: a workflow step on it holds its 'workflow' slot until the test ends. */
const silent = http.createServer(() => undefined);

before(async () => {
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  k = await startAgentTestKernel({
    only: ['scheduler', 'workflows', 'error-envelope'],
    config: `[tasks.lanes]\nschedule = ${SCHEDULE_LANE}\nworkflow = 1\n[scheduler]\nmin_interval_secs = 1\n`,
  });
});
after(async () => {
  await k.stop();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

type WorkflowRun = { id: string; state: string };
type Run = { slot: string; started_at: string; state: string };

test('N+1 long scheduled workflows on a schedule lane of N: a cron job of another kind still fires on time', { timeout: 30_000 }, async () => {
  const base_url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
  const slow = await k.spawnAgent('slow', { model: { provider: 'openai', model: 'fake-model', base_url, api_key_env: AGENT_TEST_KEY_ENV } });
  const punctual = await k.spawnAgent('punctual');
  // The first run's step holds the one 'workflow' slot; the other runs' steps wait for it.
  k.fake.setFallback({ text: 'on time' });
  const created = await call<{ workflow_id: string }>(k, '/api/workflows', {
    method: 'POST',
    json: { name: 'long', steps: [{ agent_id: slow, prompt: 'a long step' }] },
  });
  const workflow = created.body.workflow_id;
  for (let i = 0; i <= SCHEDULE_LANE; i++) await createJob(k, { name: `long ${i}`, workflow_id: workflow, cron: 'every 1s', prompt: `run ${i}` });
  const open = async () => (await call<WorkflowRun[]>(k, `/api/workflows/${workflow}/runs`)).body.filter((r) => r.state === 'Pending' || r.state === 'Running');
  await waitFor(async () => (await open()).length === SCHEDULE_LANE + 1, 10_000, 'every scheduled workflow to have started its run');

  const cron = await createJob(k, { agent_id: punctual, cron: 'every 1s', prompt: 'tick' });
  const fired = await waitFor(async () => ((await job(k, cron.id)).run_count >= 1 ? job(k, cron.id) : undefined), 5000, 'the cron job to fire');
  assert.equal(fired!.last_status, 'ok');
  assert.equal(fired!.last_result, 'on time');
  const [run] = (await call<Run[]>(k, `/api/schedules/${cron.id}/runs`)).body;
  assert.ok(Date.parse(run.started_at) - Date.parse(run.slot) < 1000, `started ${run.started_at} for the slot ${run.slot}`);
  assert.equal((await open()).length, SCHEDULE_LANE + 1, 'the workflows were still waiting for their steps');
});
