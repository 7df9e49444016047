/**
 * WorkflowRunner.start: the run's row is committed before it answers, and the run goes on without its caller; a key
 * already kept answers that run (its outcome, wherever it ran) instead of starting another. This is what lets a
 * scheduled run taken over from a dead process find the workflow run that process started rather than run it twice.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { workflowRunner, type WorkflowRunner } from '@talon/workflows';
import { call, createWorkflow, prompts, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

let env: Env;
let runner: WorkflowRunner;
let wf: string;

before(async () => {
  env = await startEnv();
  runner = env.k.kernel.services.view<WorkflowRunner>(workflowRunner.id);
  const agent = await spawn(env.k, 'starter');
  wf = await createWorkflow(env.k, { name: 'keyed', steps: [{ agent_id: agent, prompt: '{{input}}' }] });
});
after(() => stopEnv(env));

test('start answers once the run is committed; the same key answers that run, running nothing more; another key starts one', async () => {
  env.fake.enqueue({ text: 'first', delayMs: 300 });
  const first = await runner.start(wf, 'keyed input', 'test', 'caller:1');
  const open = await call<{ state: string; origin: string }>(env.k, `/api/workflows/runs/${first.run_id}`);
  assert.equal(open.status, 200, 'the row is there before the run ends');
  assert.ok(['Pending', 'Running'].includes(open.body.state), open.body.state);
  assert.equal(open.body.origin, 'test');

  const again = await runner.start(wf, 'another input', 'test', 'caller:1');
  assert.equal(again.run_id, first.run_id);
  const expected = { run_id: first.run_id, output: 'first', status: 'completed' };
  assert.deepEqual(await first.done, expected);
  assert.deepEqual(await again.done, expected);
  // Once ended, the key still answers the run: its outcome is read from the row.
  assert.deepEqual(await (await runner.start(wf, 'late', 'test', 'caller:1')).done, expected);

  env.fake.enqueue({ text: 'second' });
  const other = await runner.start(wf, 'other input', 'test', 'caller:2');
  assert.notEqual(other.run_id, first.run_id);
  assert.equal((await other.done).output, 'second');
  const runs = (await call<Array<{ id: string }>>(env.k, `/api/workflows/${wf}/runs`)).body;
  assert.equal(runs.length, 2);
  assert.deepEqual(prompts(env.fake), ['keyed input', 'other input'], 'one step per run: the repeated key ran nothing');
});

test('start rejects with 404 naming an unknown workflow', async () => {
  await assert.rejects(runner.start('no-such-workflow', '', 'test'), (err: Error & { statusCode?: number }) => {
    assert.equal(err.statusCode, 404);
    assert.match(err.message, /workflow 'no-such-workflow' not found/);
    return true;
  });
});
