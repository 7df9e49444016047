import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { call, createWorkflow, prompts, replyByPrompt, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type Json = Record<string, unknown>;
type RunResult = { run_id: string; output: string; status: string; error?: string };
type StepResult = {
  step_name: string;
  status: string;
  iteration: number | null;
  attempts: number;
  output: string | null;
  error: string | null;
  duration_ms: number;
};

describe('workflows: running the five modes', () => {
  let env: Env;
  let a: string;
  let b: string;
  let script: ReturnType<typeof replyByPrompt>;
  const run = async (id: string, input: unknown) => (await call<RunResult>(env.k, `/api/workflows/${id}/run`, { method: 'POST', json: { input } })).body;
  const steps = async (runId: string) => (await call<{ step_results: StepResult[] }>(env.k, `/api/workflows/runs/${runId}`)).body.step_results;

  before(async () => {
    env = await startEnv('[workflows]\nretry_backoff_ms = 10\nfan_out_concurrency = 2\n');
    a = await spawn(env.k, 'alpha');
    b = await spawn(env.k, 'beta');
    script = replyByPrompt(env.fake);
  });
  beforeEach(() => {
    script.set({});
    env.fake.requests.length = 0;
    env.fake.setFallback({ text: 'ok' });
  });
  after(() => stopEnv(env));

  test('sequential: each output is the next {{input}}; output_var keeps it for later steps; 200 {run_id, output, status}', async () => {
    const id = await createWorkflow(env.k, {
      name: 'chain',
      steps: [
        { name: 'one', agent_id: a, prompt: 'Research {{input}}', output_var: 'facts' },
        { name: 'two', agent_name: 'beta', prompt: 'Write about {{input}} {{unknown}}' },
        { name: 'three', agent_id: a, prompt: 'Check {{input}} against {{ facts }}' },
      ],
    });
    env.fake.enqueue({ text: 'F1' }, { text: 'D2' }, { text: 'final' });
    const res = await call<RunResult>(env.k, `/api/workflows/${id}/run`, { method: 'POST', json: { input: 'otters' } });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['output', 'run_id', 'status']);
    assert.equal(res.body.status, 'completed');
    assert.equal(res.body.output, 'final');
    assert.deepEqual(prompts(env.fake), ['Research otters', 'Write about F1 {{unknown}}', 'Check D2 against F1']);
    const list = (await call<Json[]>(env.k, `/api/workflows/${id}/runs`)).body;
    assert.deepEqual(Object.keys(list[0]).sort(), [
      'completed_at',
      'error',
      'id',
      'origin',
      'started_at',
      'state',
      'steps_completed',
      'workflow_id',
      'workflow_name',
    ]);
    assert.equal(list[0].state, 'Completed');
    assert.equal(list[0].steps_completed, 3);
    assert.equal(list[0].workflow_name, 'chain');
    const detail = await steps(res.body.run_id);
    assert.deepEqual(
      detail.map((s) => [s.step_name, s.status, s.attempts]),
      [
        ['one', 'completed', 1],
        ['two', 'completed', 1],
        ['three', 'completed', 1],
      ],
    );
    // Runs are listed newest first.
    const second = await run(id, 'again');
    assert.equal((await call<Json[]>(env.k, `/api/workflows/${id}/runs`)).body[0].id, second.run_id);
  });

  test('a JSON object input seeds variables, and its input field is {{input}}', async () => {
    const id = await createWorkflow(env.k, { name: 'seeded', steps: [{ agent_id: a, prompt: '{{input}} for {{audience}} ({{count}})' }] });
    await run(id, { input: 'a summary', audience: 'kids', count: 3 });
    assert.deepEqual(prompts(env.fake), ['a summary for kids (3)']);
  });

  test('fan_out: consecutive steps share the input and run in parallel up to the cap; collect gathers only that group', async () => {
    const id = await createWorkflow(env.k, {
      name: 'fan',
      steps: [
        { name: 'prep', agent_id: a, prompt: 'prep {{input}}' },
        { name: 'x', agent_id: a, mode: 'fan_out', prompt: 'x:{{input}}' },
        { name: 'y', agent_id: b, mode: 'fan_out', prompt: 'y:{{input}}' },
        { name: 'z', agent_id: a, mode: 'fan_out', prompt: 'z:{{input}}' },
        { name: 'all', mode: 'collect', output_var: 'gathered' },
        { name: 'sum', agent_id: b, prompt: 'Summarise: {{gathered}}' },
      ],
    });
    env.fake.enqueue({ text: 'P' });
    env.fake.setFallback({ text: 'R', delayMs: 300 });
    const pending = run(id, 'topic');
    let most = 0;
    const sampler = setInterval(async () => {
      const lanes = (await call<{ lanes: Array<{ lane: string; active: number }> }>(env.k, '/api/queue/status')).body.lanes;
      most = Math.max(most, lanes.find((l) => l.lane === 'workflow')?.active ?? 0);
    }, 20);
    const res = await pending;
    clearInterval(sampler);
    assert.equal(res.status, 'completed');
    assert.equal(most, 2, 'fan_out_concurrency = 2 caps the group');
    const sent = prompts(env.fake);
    assert.deepEqual(sent.slice(1, 4).sort(), ['x:P', 'y:P', 'z:P']);
    const results = ['x', 'y', 'z'].map((step, i) => ({ step, agent: i === 1 ? 'beta' : 'alpha', output: 'R' }));
    assert.equal(sent[4], `Summarise: ${JSON.stringify({ results })}`, 'collect leaves out the step before the group');
    const detail = await steps(res.run_id);
    assert.deepEqual(
      detail.map((s) => s.step_name),
      ['prep', 'x', 'y', 'z', 'all', 'sum'],
    );
  });

  test('collect runs no turn: the outputs since the fan-out go on as {"results"} JSON in {{input}} and output_var, even when it names an agent', async () => {
    const id = await createWorkflow(env.k, {
      name: 'collect-no-turn',
      steps: [
        { name: 'prep', agent_id: a, prompt: 'prep {{input}}' },
        { name: 'x', agent_id: a, mode: 'fan_out', prompt: 'x:{{input}}' },
        { name: 'y', agent_id: b, mode: 'fan_out', prompt: 'y:{{input}}' },
        // The reference requires an agent on every step and ignores it on a collect step.
        { name: 'gather', agent_id: a, mode: 'collect', output_var: 'gathered' },
        { name: 'use', agent_id: b, prompt: 'input={{input}} var={{gathered}}' },
      ],
    });
    // x and y start together, in either order at the provider.
    script.set({ prep: { text: 'P' }, 'x:': { text: 'X', delayMs: 50 }, 'y:': { text: 'Y' }, 'input=': { text: 'final' } });
    const res = await run(id, 'topic');
    assert.equal(res.status, 'completed');
    assert.equal(prompts(env.fake).length, 4, 'prep, x, y and use: no turn for the collect step');
    const gathered = JSON.stringify({
      results: [
        { step: 'x', agent: 'alpha', output: 'X' },
        { step: 'y', agent: 'beta', output: 'Y' },
      ],
    });
    assert.equal(prompts(env.fake)[3], `input=${gathered} var=${gathered}`, 'the gathered outputs, without the step before the fan-out');
    const detail = await steps(res.run_id);
    const collect = detail.find((s) => s.step_name === 'gather')!;
    assert.deepEqual([collect.status, collect.output, collect.attempts], ['completed', gathered, 0]);

    // The window starts again after a collect; with no fan-out since, it holds the outputs since that collect.
    const again = await createWorkflow(env.k, {
      name: 'collect-twice',
      steps: [
        { name: 'x', agent_id: a, mode: 'fan_out' },
        { name: 'first', mode: 'collect' },
        { name: 'one', agent_id: b, prompt: 'one' },
        { name: 'two', agent_id: a, prompt: 'two' },
        { name: 'second', mode: 'collect' },
      ],
    });
    env.fake.enqueue({ text: 'X' }, { text: '1' }, { text: '2' });
    const twice = await run(again, 'in');
    assert.deepEqual(JSON.parse(twice.output), {
      results: [
        { step: 'one', agent: 'beta', output: '1' },
        { step: 'two', agent: 'alpha', output: '2' },
      ],
    });
  });

  test('collect with summarize = true runs one turn on its agent over the gathered results; without an agent it is a 400', async () => {
    const id = await createWorkflow(env.k, {
      name: 'collect-summarize',
      steps: [
        { name: 'x', agent_id: a, mode: 'fan_out', prompt: 'x:{{input}}' },
        { name: 'y', agent_id: a, mode: 'fan_out', prompt: 'y:{{input}}' },
        { name: 'sum', agent_id: b, mode: 'collect', summarize: true, prompt: 'Summarise: {{input}}', output_var: 'summary' },
        { name: 'after', agent_id: a, prompt: 'got {{summary}}' },
      ],
    });
    // x and y start together, in either order at the provider.
    script.set({ 'x:': { text: 'X' }, 'y:': { text: 'Y' }, 'Summarise:': { text: 'S' }, got: { text: 'end' } });
    const res = await run(id, 'in');
    assert.equal(res.output, 'end');
    const sent = prompts(env.fake);
    assert.equal(sent.length, 4);
    assert.equal(
      sent[2],
      `Summarise: ${JSON.stringify({
        results: [
          { step: 'x', agent: 'alpha', output: 'X' },
          { step: 'y', agent: 'alpha', output: 'Y' },
        ],
      })}`,
    );
    assert.equal(sent[3], 'got S');
    const bad = await call<{ error: string }>(env.k, '/api/workflows', {
      method: 'POST',
      json: { name: 'x', steps: [{ name: 'c', mode: 'collect', summarize: true }] },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /step 'c': summarize needs agent_id or agent_name/);
    const notCollect = await call<{ error: string }>(env.k, '/api/workflows', {
      method: 'POST',
      json: { name: 'x', steps: [{ name: 's', agent_id: a, summarize: true }] },
    });
    assert.equal(notCollect.status, 400);
    assert.match(notCollect.body.error, /step 's': summarize applies to collect steps only/);
  });

  test('fan_out honours error_mode: a skipped failure leaves the others; a failing one fails the run', async () => {
    const skip = await createWorkflow(env.k, {
      name: 'fan-skip',
      steps: [
        { name: 'good', agent_id: a, mode: 'fan_out' },
        { name: 'bad', agent_id: '00000000-0000-4000-8000-000000000000', mode: 'fan_out', error_mode: 'skip' },
        { name: 'all', mode: 'collect' },
      ],
    });
    env.fake.setFallback({ text: 'fine' });
    const res = await run(skip, 'in');
    assert.equal(res.status, 'completed');
    assert.deepEqual(JSON.parse(res.output), { results: [{ step: 'good', agent: 'alpha', output: 'fine' }] }, 'the skipped step is left out');
    const detail = await steps(res.run_id);
    assert.equal(detail.find((s) => s.step_name === 'bad')?.status, 'skipped');
    const fail = await createWorkflow(env.k, {
      name: 'fan-fail',
      steps: [
        { name: 'good', agent_id: a, mode: 'fan_out' },
        { name: 'bad', agent_id: '00000000-0000-4000-8000-000000000000', mode: 'fan_out' },
      ],
    });
    const failed = await run(fail, 'in');
    assert.equal(failed.status, 'failed');
    assert.match(String(failed.error), /Step 'bad' failed: agent '00000000-0000-4000-8000-000000000000' not found/);
  });

  test('conditional: runs when the condition holds over the previous output; otherwise skipped and the run goes on', async () => {
    const id = await createWorkflow(env.k, {
      name: 'cond',
      steps: [
        { name: 'check', agent_id: a, prompt: 'check' },
        { name: 'urgent', agent_id: a, mode: 'conditional', condition: 'URGENT && !ignore', prompt: 'escalate {{input}}' },
        { name: 'never', agent_id: a, mode: 'conditional', condition: 'calm || "a || b"', prompt: 'nope' },
        { name: 'last', agent_id: a, prompt: 'last {{input}}' },
      ],
    });
    env.fake.enqueue({ text: 'this is urgent' }, { text: 'escalated' }, { text: 'done' });
    const res = await run(id, '');
    assert.equal(res.output, 'done');
    assert.deepEqual(prompts(env.fake), ['check', 'escalate this is urgent', 'last escalated']);
    const detail = await steps(res.run_id);
    const never = detail.find((s) => s.step_name === 'never')!;
    assert.equal(never.status, 'skipped');
    assert.match(String(never.error), /did not hold/);
    assert.equal((await call<Json[]>(env.k, `/api/workflows/${id}/runs`)).body[0].steps_completed, 3);
  });

  test('loop: each output feeds the next iteration; it stops early when the output contains until (any case)', async () => {
    const id = await createWorkflow(env.k, {
      name: 'loop',
      steps: [{ name: 'refine', agent_id: a, mode: 'loop', max_iterations: 4, until: 'APPROVED', prompt: 'improve: {{input}}', output_var: 'v' }],
    });
    env.fake.enqueue({ text: 'v1' }, { text: 'v2 approved' }, { text: 'never' });
    const res = await run(id, 'v0');
    assert.equal(res.output, 'v2 approved');
    assert.deepEqual(prompts(env.fake), ['improve: v0', 'improve: v1']);
    assert.deepEqual(
      (await steps(res.run_id)).map((s) => s.iteration),
      [1, 2],
    );
    const capped = await createWorkflow(env.k, { name: 'loop-cap', steps: [{ agent_id: a, mode: 'loop', prompt: '{{input}}+' }] });
    env.fake.setFallback({ text: 'again' });
    const five = await run(capped, 'x');
    assert.equal((await steps(five.run_id)).length, 5, 'max_iterations defaults to 5; an empty until never stops early');
  });

  test('error modes: fail stops the run (200, status failed, naming the step); skip goes on; retry tries again', async () => {
    const failing = { status: 500 };
    const fail = await createWorkflow(env.k, {
      name: 'fail',
      steps: [
        { name: 'boom', agent_id: a },
        { name: 'after', agent_id: a },
      ],
    });
    env.fake.enqueue(failing);
    const res = await call<RunResult>(env.k, `/api/workflows/${fail}/run`, { method: 'POST', json: { input: 'x' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'failed');
    assert.equal(res.body.output, '');
    assert.match(String(res.body.error), /^Step 'boom' failed: /);
    assert.equal((await call<Json[]>(env.k, `/api/workflows/${fail}/runs`)).body[0].state, 'Failed');

    const skip = await createWorkflow(env.k, {
      name: 'skip',
      steps: [
        { agent_id: a, prompt: 'first' },
        { name: 's', agent_id: a, error_mode: 'skip' },
        { agent_id: a, prompt: 'then {{input}}' },
      ],
    });
    env.fake.enqueue({ text: 'one' }, failing, { text: 'end' });
    const skipped = await run(skip, 'x');
    assert.equal(skipped.status, 'completed');
    assert.equal(prompts(env.fake).at(-1), 'then one', 'a skipped step leaves {{input}} as it was');

    const retry = await createWorkflow(env.k, { name: 'retry', steps: [{ name: 'r', agent_id: a, error_mode: 'retry', max_retries: 2 }] });
    env.fake.enqueue(failing, failing, { text: 'third time' });
    const retried = await run(retry, 'x');
    assert.equal(retried.output, 'third time');
    assert.equal((await steps(retried.run_id))[0].attempts, 3);
    env.fake.enqueue(failing, failing, failing);
    const exhausted = await run(retry, 'x');
    assert.equal(exhausted.status, 'failed');
    assert.match(String(exhausted.error), /^Step 'r' failed after 2 retries: /);
  });

  test('timeouts: a step over its timeout_secs fails naming it; a run over total_timeout_secs fails', async () => {
    const slow = await createWorkflow(env.k, { name: 'slow-step', steps: [{ name: 'long', agent_id: a, timeout_secs: 1 }] });
    env.fake.enqueue({ text: 'late', delayMs: 2000 });
    const res = await run(slow, 'x');
    assert.equal(res.status, 'failed');
    assert.match(String(res.error), /Step 'long' failed: the turn of agent 'alpha' timed out after 1s \(raise the step's timeout_secs/);
    const whole = await createWorkflow(env.k, { name: 'slow-run', total_timeout_secs: 1, steps: [{ agent_id: a }, { agent_id: a }] });
    env.fake.enqueue({ text: 'late', delayMs: 2000 });
    const total = await run(whole, 'x');
    assert.equal(total.status, 'failed');
    assert.match(String(total.error), /total timeout of 1s/);
    // No fixed ceiling: limits beyond what one timer can hold (about 24.8 days) mean that long, not "at once".
    const long = await createWorkflow(env.k, { name: 'long-limits', total_timeout_secs: 3_000_000, steps: [{ agent_id: a, timeout_secs: 3_000_000 }] });
    env.fake.enqueue({ text: 'in time', delayMs: 300 });
    const within = await run(long, 'x');
    assert.deepEqual([within.status, within.output], ['completed', 'in time']);
  });

  test('cancel: a running run ends Cancelled at once; cancelling it again → 409', async () => {
    const id = await createWorkflow(env.k, { name: 'cancel-me', steps: [{ agent_id: a }, { agent_id: a }] });
    env.fake.enqueue({ text: 'slow', delayMs: 2500 });
    const pending = run(id, 'x');
    const listed = (await waitFor(
      async () => (await call<Json[]>(env.k, `/api/workflows/${id}/runs`)).body.find((r) => r.state === 'Running'),
      3000,
      'Running',
    ))!;
    const cancelled = await call<Json>(env.k, `/api/workflows/runs/${listed.id}/cancel`, { method: 'POST' });
    assert.deepEqual(cancelled.body, { run_id: listed.id, state: 'Cancelled' });
    assert.equal((await pending).status, 'cancelled');
    assert.equal((await call(env.k, `/api/workflows/runs/${listed.id}/cancel`, { method: 'POST' })).status, 409);
  });
});
