import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, createWorkflow, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type Json = Record<string, unknown>;

describe('workflows: create, list, get, update, delete', () => {
  let env: Env;
  let agent: string;
  before(async () => {
    env = await startEnv();
    agent = await spawn(env.k, 'writer');
  });
  after(() => stopEnv(env));

  test('POST → 201 {workflow_id}; the list item has the spec fields; GET fills every default', async () => {
    const res = await call<{ workflow_id: string }>(env.k, '/api/workflows', {
      method: 'POST',
      json: { name: 'brief', description: 'two steps', steps: [{ name: 'draft', agent_id: agent, prompt: 'Draft: {{input}}' }, { agent_name: 'writer' }] },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body), ['workflow_id']);
    const list = (await call<Json[]>(env.k, '/api/workflows')).body;
    const item = list.find((w) => w.id === res.body.workflow_id)!;
    assert.deepEqual(item, {
      id: res.body.workflow_id,
      name: 'brief',
      description: 'two steps',
      steps: 2,
      created_at: item.created_at,
      updated_at: item.updated_at,
    });
    assert.ok(!Number.isNaN(Date.parse(String(item.created_at))));
    const def = (await call<Json & { steps: Json[] }>(env.k, `/api/workflows/${res.body.workflow_id}`)).body;
    assert.equal(def.name, 'brief');
    assert.deepEqual(def.steps[1], {
      name: 'step 2',
      agent_id: null,
      agent_name: 'writer',
      prompt: '{{input}}',
      mode: 'sequential',
      timeout_secs: 120,
      error_mode: 'fail',
      max_retries: 3,
      backoff_ms: null,
      output_var: null,
      condition: '',
      max_iterations: 5,
      until: '',
      session_mode: null,
      summarize: false,
      depends_on: [],
    });
    assert.equal(def.total_timeout_secs, null);
  });

  test('bad definitions → 400 naming the problem', async () => {
    const step = { agent_id: agent };
    const cases: Array<[unknown, RegExp]> = [
      [{ steps: [step] }, /name/],
      [{ name: 'x' }, /steps/],
      [{ name: 'x', steps: [{ prompt: 'hi' }] }, /needs agent_id or agent_name/],
      [{ name: 'x', steps: [{ agent_id: 'not-a-uuid' }] }, /not a UUID/],
      [{ name: 'x', steps: [{ ...step, mode: 'parallel' }] }, /mode|allowed values/],
      [{ name: 'x', steps: [{ ...step, error_mode: 'ignore' }] }, /error_mode|allowed values/],
      [{ name: 'x', steps: [{ ...step, output_var: 'input' }] }, /reserved/],
      [{ name: 'x', steps: [{ ...step, timeout_secs: -1 }] }, /timeout_secs|>= 0/],
      [{ name: 'x', steps: [{ ...step, colour: 'red' }] }, /unknown property 'colour'/],
      [{ name: 'x', steps: 'all of them' }, /steps/],
    ];
    for (const [json, error] of cases) {
      const res = await call<{ error: string }>(env.k, '/api/workflows', { method: 'POST', json });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.match(res.body.error, error, JSON.stringify(json));
    }
    const empty = await call(env.k, '/api/workflows', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    assert.equal(empty.status, 400);
  });

  test("the reference's spellings: nested mode and retry objects, an agent object, prompt_template", async () => {
    const id = await createWorkflow(env.k, {
      name: 'reference-shaped',
      steps: [
        {
          name: 'check',
          agent: { agent_name: 'writer' },
          prompt_template: 'Check {{input}}',
          mode: { conditional: { condition: 'ok' } },
          error_mode: { retry: { max_retries: 2, backoff_ms: 10 } },
        },
        { name: 'polish', agent: { agent_id: agent }, mode: { loop: { max_iterations: 3, until: 'done' } } },
      ],
    });
    const [check, polish] = (await call<{ steps: Json[] }>(env.k, `/api/workflows/${id}`)).body.steps;
    assert.deepEqual(
      [check.agent_name, check.prompt, check.mode, check.condition, check.error_mode, check.max_retries, check.backoff_ms],
      ['writer', 'Check {{input}}', 'conditional', 'ok', 'retry', 2, 10],
    );
    assert.deepEqual([polish.agent_id, polish.mode, polish.max_iterations, polish.until], [agent, 'loop', 3, 'done']);
    const twice = await call<{ error: string }>(env.k, '/api/workflows', {
      method: 'POST',
      json: { name: 'x', steps: [{ name: 'twice', agent_id: agent, agent: { agent_id: '00000000-0000-4000-8000-000000000001' } }] },
    });
    assert.equal(twice.status, 400);
    assert.match(twice.body.error, /step 'twice': agent_id is given twice/);
    const unknownMode = await call(env.k, '/api/workflows', { method: 'POST', json: { name: 'x', steps: [{ agent_id: agent, mode: { parallel: {} } }] } });
    assert.equal(unknownMode.status, 400);
  });

  test('a collect step needs no agent; an empty step list is a workflow that returns its input', async () => {
    const id = await createWorkflow(env.k, { name: 'gather', steps: [{ mode: 'collect' }] });
    assert.equal((await call<{ steps: Json[] }>(env.k, `/api/workflows/${id}`)).body.steps[0].mode, 'collect');
    const none = await createWorkflow(env.k, { name: 'nothing', steps: [] });
    const run = await call<Json>(env.k, `/api/workflows/${none}/run`, { method: 'POST', json: { input: 'same' } });
    assert.deepEqual({ ...run.body, run_id: undefined }, { run_id: undefined, output: 'same', status: 'completed' });
  });

  test('PUT changes what it is sent and keeps the rest; answers the updated definition', async () => {
    const id = await createWorkflow(env.k, { name: 'old', description: 'keep me', steps: [{ agent_id: agent, prompt: 'a' }] });
    let res = await call<Json & { steps: Json[] }>(env.k, `/api/workflows/${id}`, { method: 'PUT', json: { name: 'new' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'new');
    assert.equal(res.body.description, 'keep me');
    assert.equal(res.body.steps[0].prompt, 'a');
    res = await call(env.k, `/api/workflows/${id}`, {
      method: 'PUT',
      json: {
        steps: [
          { agent_id: agent, prompt: 'b' },
          { agent_id: agent, prompt: 'c' },
        ],
        total_timeout_secs: 30,
      },
    });
    assert.deepEqual(
      res.body.steps.map((s) => s.prompt),
      ['b', 'c'],
    );
    assert.equal(res.body.total_timeout_secs, 30);
    assert.equal((await call<Json>(env.k, `/api/workflows/${id}`)).body.name, 'new');
    assert.equal((await call(env.k, `/api/workflows/${id}`, { method: 'PUT', json: { steps: [{}] } })).status, 400);
    assert.equal((await call(env.k, `/api/workflows/${id}`, { method: 'PUT', json: {} })).status, 400);
    assert.equal((await call(env.k, '/api/workflows/00000000-0000-4000-8000-000000000000', { method: 'PUT', json: { name: 'x' } })).status, 404);
    assert.equal((await call(env.k, '/api/workflows/nope', { method: 'PUT', json: { name: 'x' } })).status, 400);
  });

  test('DELETE → {status: removed, workflow_id}; then it and its runs are gone (404)', async () => {
    const id = await createWorkflow(env.k, { name: 'doomed', steps: [] });
    await call(env.k, `/api/workflows/${id}/run`, { method: 'POST', json: { input: 'x' } });
    const res = await call(env.k, `/api/workflows/${id}`, { method: 'DELETE' });
    assert.deepEqual(res, { status: 200, body: { status: 'removed', workflow_id: id } });
    assert.equal((await call(env.k, `/api/workflows/${id}`)).status, 404);
    assert.equal((await call(env.k, `/api/workflows/${id}/runs`)).status, 404);
    assert.equal((await call(env.k, `/api/workflows/${id}`, { method: 'DELETE' })).status, 404);
    assert.equal((await call(env.k, '/api/workflows/nope', { method: 'DELETE' })).status, 400);
  });

  test('unknown or malformed ids: GET, run and runs answer 404 / 400 with an error', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [path, method] of [
      [`/api/workflows/${unknown}`, 'GET'],
      [`/api/workflows/${unknown}/run`, 'POST'],
      [`/api/workflows/${unknown}/runs`, 'GET'],
      [`/api/workflows/runs/${unknown}`, 'GET'],
      [`/api/workflows/runs/${unknown}/cancel`, 'POST'],
    ]) {
      const res = await call<{ error: string }>(env.k, path, { method, json: method === 'POST' ? {} : undefined });
      assert.equal(res.status, 404, path);
      assert.match(res.body.error, /not found/);
    }
    assert.equal((await call(env.k, '/api/workflows/nope/runs')).status, 400);
    assert.equal((await call(env.k, '/api/workflows/nope/run', { method: 'POST', json: {} })).status, 400);
  });
});
