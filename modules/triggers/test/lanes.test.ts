/**
 * A trigger that starts a workflow holds no 'trigger' lane slot while the workflow's steps wait for 'workflow' slots:
 * more long workflow fires than the trigger lane has slots never stop a trigger that runs an agent turn.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AGENT_TEST_KEY_ENV, waitFor } from '@talon/testing';
import { call, createTrigger, deliveriesAtLeast, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

const TRIGGER_LANE = 1;
let env: Env;
/** A model endpoint that never answers: a workflow step on it holds its 'workflow' slot until the test ends. */
const silent = http.createServer(() => undefined);

before(async () => {
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  env = await startEnv(`[tasks.lanes]\ntrigger = ${TRIGGER_LANE}\nworkflow = 1\n`, ['workflows']);
});
after(async () => {
  await stopEnv(env);
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

type WorkflowRun = { id: string; state: string };

test('long workflow fires beyond the trigger lane: a trigger running an agent turn still answers', { timeout: 30_000 }, async () => {
  const base_url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
  const slow = await env.k.spawnAgent('slow', { model: { provider: 'openai', model: 'fake-model', base_url, api_key_env: AGENT_TEST_KEY_ENV } });
  const created = await call<{ workflow_id: string }>(env.k, '/api/workflows', {
    method: 'POST',
    json: { name: 'long', steps: [{ agent_id: slow, prompt: 'a long step' }] },
  });
  const workflow = created.body.workflow_id;
  const owner = await spawn(env.k, 'owner');
  for (let i = 0; i <= TRIGGER_LANE; i++)
    await createTrigger(env.k, { agent_id: owner, workflow_id: workflow, pattern: { custom: { event_type: `long-${i}` } }, prompt_template: '{{event}}' });
  for (let i = 0; i <= TRIGGER_LANE; i++) env.publish('custom', { type: `long-${i}`, data: i });
  const open = async () =>
    (await call<WorkflowRun[]>(env.k, `/api/workflows/${workflow}/runs`)).body.filter((r) => r.state === 'Pending' || r.state === 'Running');
  await waitFor(async () => (await open()).length === TRIGGER_LANE + 1, 10_000, 'every fired workflow to have started its run');

  const punctual = await spawn(env.k, 'punctual');
  env.fake.setFallback({ text: 'on time' });
  await createTrigger(env.k, { agent_id: punctual, pattern: { custom: { event_type: 'tick' } }, prompt_template: '{{event}}' });
  env.publish('custom', { type: 'tick', data: null });
  const [delivered] = await deliveriesAtLeast(env.k, punctual, 1, 5000);
  assert.match(JSON.stringify(delivered), /on time/);
  assert.equal((await open()).length, TRIGGER_LANE + 1, 'the workflows were still waiting for their steps');
});
