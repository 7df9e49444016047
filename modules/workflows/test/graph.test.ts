import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { call, createWorkflow, prompts, replyByPrompt, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type RunResult = { run_id: string; output: string; status: string; error?: string };
type StepResult = { step_name: string; status: string; output: string | null; error: string | null };

/** The provider request whose prompt starts with `prefix`. */
const requestOf = (env: Env, prefix: string) => {
  const found = env.fake.requests.find((r) => {
    const messages = (r.body.messages ?? []) as Array<{ role: string; content: unknown }>;
    return messages.some((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith(prefix));
  });
  assert.ok(found, `a request for '${prefix}'`);
  return found;
};

describe('workflows: depends_on runs the steps as a graph', () => {
  let env: Env;
  let a: string;
  let script: ReturnType<typeof replyByPrompt>;
  const run = async (id: string, input: unknown) => (await call<RunResult>(env.k, `/api/workflows/${id}/run`, { method: 'POST', json: { input } })).body;
  const steps = async (runId: string) => (await call<{ step_results: StepResult[] }>(env.k, `/api/workflows/runs/${runId}`)).body.step_results;

  before(async () => {
    env = await startEnv();
    a = await spawn(env.k, 'alpha');
    script = replyByPrompt(env.fake);
  });
  beforeEach(() => {
    script.set({});
    env.fake.requests.length = 0;
    env.fake.setFallback({ text: 'ok' });
  });
  after(() => stopEnv(env));

  test('independent steps run at once; a step starts when its own dependencies are done; outputs go by step name', async () => {
    const id = await createWorkflow(env.k, {
      name: 'graph',
      steps: [
        { name: 'slow', agent_id: a, prompt: 'slow: {{input}}' },
        { name: 'quick', agent_id: a, prompt: 'quick: {{topic}}' },
        { name: 'after_quick', agent_id: a, prompt: 'after quick: {{quick}}', depends_on: ['quick'] },
        { name: 'join', agent_id: a, prompt: 'join: {{slow}} + {{after_quick}} on {{input}}', depends_on: ['slow', 'after_quick'], output_var: 'joined' },
      ],
    });
    env.fake.setFallback({ text: 'unused' });
    // Slow and quick start together (in either order at the provider), then after_quick, then join.
    script.set({ 'slow:': { text: 'S', delayMs: 1500 }, 'quick:': { text: 'Q', delayMs: 100 }, 'after quick:': { text: 'AQ' }, 'join:': { text: 'J' } });
    const res = await run(id, { input: 'the input', topic: 'otters' });
    assert.equal(res.status, 'completed', res.error);
    assert.equal(res.output, 'J', 'the last step that completed');
    assert.deepEqual(prompts(env.fake).sort(), ['after quick: Q', 'join: S + AQ on the input', 'quick: otters', 'slow: the input']);
    const slow = requestOf(env, 'slow');
    const quick = requestOf(env, 'quick');
    const afterQuick = requestOf(env, 'after quick');
    assert.ok(quick.startedAt! < slow.finishedAt!, 'quick ran while slow was running');
    assert.ok(afterQuick.startedAt! < slow.finishedAt!, 'after_quick did not wait for slow, which it does not depend on');
    assert.ok(requestOf(env, 'join').startedAt! > slow.finishedAt!, 'join waited for both');
    const detail = await steps(res.run_id);
    assert.deepEqual(detail.map((s) => s.step_name).sort(), ['after_quick', 'join', 'quick', 'slow']);
  });

  test('a skipped step skips the steps after it (saying why); the other branches go on', async () => {
    const id = await createWorkflow(env.k, {
      name: 'graph-skips',
      steps: [
        { name: 'flaky', agent_id: '00000000-0000-4000-8000-000000000000', error_mode: 'skip' },
        { name: 'needs_flaky', agent_id: a, prompt: 'use {{flaky}}', depends_on: ['flaky'] },
        { name: 'check', agent_id: a, prompt: 'check' },
        { name: 'only_if_urgent', agent_id: a, mode: 'conditional', condition: 'urgent', prompt: 'escalate {{check}}', depends_on: ['check'] },
        { name: 'after_escalation', agent_id: a, prompt: 'after {{only_if_urgent}}', depends_on: ['only_if_urgent'] },
        { name: 'report', agent_id: a, prompt: 'report {{check}}', depends_on: ['check'] },
      ],
    });
    env.fake.enqueue({ text: 'all calm' }, { text: 'reported' });
    const res = await run(id, 'x');
    assert.equal(res.status, 'completed', res.error);
    assert.equal(res.output, 'reported');
    assert.deepEqual(prompts(env.fake), ['check', 'report all calm']);
    const detail = Object.fromEntries((await steps(res.run_id)).map((s) => [s.step_name, s]));
    assert.equal(detail.flaky.status, 'skipped');
    assert.deepEqual([detail.needs_flaky.status, detail.needs_flaky.error], ['skipped', "its dependency 'flaky' was skipped"]);
    assert.match(String(detail.only_if_urgent.error), /condition 'urgent' did not hold/);
    assert.deepEqual([detail.after_escalation.status, detail.after_escalation.error], ['skipped', "its dependency 'only_if_urgent' was skipped"]);
  });

  test('a failing step fails the run and cancels the steps still running', async () => {
    const id = await createWorkflow(env.k, {
      name: 'graph-fails',
      steps: [
        { name: 'long', agent_id: a, prompt: 'long' },
        { name: 'broken', agent_id: a, prompt: 'broken' },
        { name: 'never', agent_id: a, prompt: 'never {{long}} {{broken}}', depends_on: ['long', 'broken'] },
      ],
    });
    // Long and broken start together, in either order at the provider.
    script.set({ long: { text: 'late', delayMs: 3000 }, broken: { status: 500 } });
    const res = await run(id, 'x');
    assert.equal(res.status, 'failed');
    assert.match(String(res.error), /^Step 'broken' failed: /);
    await waitFor(() => requestOf(env, 'long').aborted, 3000, 'the running step cancelled (its request aborted)');
    assert.ok(!prompts(env.fake).some((p) => p.startsWith('never')));
  });

  test('an invalid graph is refused when saved, naming the problem', async () => {
    const step = (name: string, extra: Record<string, unknown> = {}) => ({ name, agent_id: a, ...extra });
    const cases: Array<[unknown[], RegExp]> = [
      [[step('a'), step('b', { depends_on: ['c'] })], /step 'b' depends on 'c', which is no step of this workflow/],
      [[step('a', { depends_on: ['b'] }), step('b', { depends_on: ['a'] })], /depends_on makes a cycle: a → b → a/],
      [[step('a', { depends_on: ['a'] })], /cycle: a → a/],
      [[step('a'), step('a', { depends_on: ['a'] })], /unique .*'a' is used twice/],
      [[step('a'), step('b', { depends_on: ['a'], mode: 'fan_out' })], /step 'b': mode fan_out does not apply/],
      [[step('a'), step('b', { depends_on: ['a'] }), step('c', { depends_on: ['a'], prompt: '{{b}}' })], /step 'c' uses \{\{b\}\}.*add 'b' to its depends_on/],
      [
        [step('a', { output_var: 'facts' }), step('b'), step('c', { depends_on: ['b'], prompt: '{{facts}}' })],
        /step 'c' uses \{\{facts\}\}, the output of step 'a'/,
      ],
      [[step('input'), step('b', { depends_on: ['input'] })], /'input' is reserved/],
      [[step('a', { depends_on: ['x', 'x'] })], /duplicate|identical/],
    ];
    for (const [stepsOf, error] of cases) {
      const res = await call<{ error: string }>(env.k, '/api/workflows', { method: 'POST', json: { name: 'bad', steps: stepsOf } });
      assert.equal(res.status, 400, JSON.stringify(stepsOf));
      assert.match(res.body.error, error, JSON.stringify(stepsOf));
    }
    // A step may read what any step before it in the graph produced, not only its direct dependencies.
    const ok = await call(env.k, '/api/workflows', {
      method: 'POST',
      json: { name: 'transitive', steps: [step('a'), step('b', { depends_on: ['a'] }), step('c', { depends_on: ['b'], prompt: '{{a}} {{b}}' })] },
    });
    assert.equal(ok.status, 201);
  });
});
