/** This instance as an A2A agent: cards, the official SDK client (1.0) and the 0.3 JSON-RPC methods, the spec task endpoints. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { rmSync } from 'node:fs';
import { setConfig, waitFor } from '@talon/testing';
import { json, spawnAgent, startEnv, stopEnv, type Env, type TaskView } from './helpers.ts';

const userMessage = (text: string): Message => ({
  messageId: crypto.randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const sendParams = (text: string, returnImmediately = false) => ({
  tenant: '',
  message: userMessage(text),
  configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately },
  metadata: undefined,
});
const replyText = (task: Task) => {
  const part = task.status?.message?.parts[0]?.content;
  return part?.$case === 'text' ? part.value : undefined;
};

describe('A2A server', () => {
  let env: Env;
  let agentId: string;
  before(async () => {
    env = await startEnv();
    agentId = await spawnAgent(env.k, 'scout');
  });
  after(() => stopEnv(env));

  it('serves the agent card at both well-known paths with the spec fields', async () => {
    for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json']) {
      const res = await env.k.request(path);
      assert.equal(res.status, 200);
      const card = await json<Record<string, unknown>>(res);
      assert.equal(card.name, 'Talon');
      assert.equal(typeof card.description, 'string');
      assert.equal(card.url, `${env.k.url}/a2a`);
      assert.equal(typeof card.version, 'string');
      assert.deepEqual(card.capabilities, { streaming: true, pushNotifications: false, stateTransitionHistory: false });
      const skills = card.skills as Array<{ id: string; name: string; description: string }>;
      assert.deepEqual(
        skills.map((s) => [s.id, s.name]),
        [[agentId, 'scout']],
      );
      assert.equal(skills[0].description, 'The scout agent');
    }
    const list = await json<{ agents: Array<{ agent_id: string; url: string; name: string }>; total: number }>(await env.k.request('/a2a/agents'));
    assert.equal(list.total, 1);
    assert.equal(list.agents[0].agent_id, agentId);
    assert.equal(list.agents[0].url, `${env.k.url}/a2a/agents/${agentId}`);
  });

  it('the official A2A client (1.0) sends a message and reads the task', async () => {
    const client = await new ClientFactory().createFromUrl(env.k.url);
    env.fake.enqueue({ text: 'scouting report: all clear' });
    const result = await client.sendMessage(sendParams('report please'));
    assert.ok('status' in result, 'a task comes back');
    const task = result as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(replyText(task), 'scouting report: all clear');
    assert.equal(task.metadata?.agent_id, agentId);
    const again = await client.getTask({ tenant: '', id: task.id });
    assert.equal(again.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(again.artifacts[0]?.parts[0]?.content?.$case, 'text');
    await assert.rejects(client.getTask({ tenant: '', id: 'no-such-task' }), /not found/i);
    await assert.rejects(client.cancelTask({ tenant: '', id: task.id, metadata: undefined }), /cancel/i);
  });

  it('the official client streams, and cancels a running task', async () => {
    const client = await new ClientFactory().createFromUrl(`${env.k.url}/a2a/agents/${agentId}/`);
    env.fake.enqueue({ text: 'streamed answer' });
    const states: number[] = [];
    for await (const event of client.sendMessageStream(sendParams('stream it'))) {
      if (event.payload?.$case === 'statusUpdate') states.push(event.payload.value.status!.state);
      if (event.payload?.$case === 'task') states.push(event.payload.value.status!.state);
    }
    assert.deepEqual(states.slice(-2), [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);

    env.fake.enqueue({ text: 'too late', delayMs: 3000 });
    // Counted before: the last request seen may still be the streamed one above.
    const asked = env.fake.requests.length;
    const started = (await client.sendMessage(sendParams('take your time', true))) as Task;
    assert.notEqual(started.status?.state, TaskState.TASK_STATE_COMPLETED);
    await waitFor(() => env.fake.requests.length > asked, 3000, 'the turn to reach the model');
    const cancelled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    assert.equal(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
    const view = await json<TaskView>(await env.k.request(`/a2a/tasks/${started.id}`));
    assert.equal(view.status, 'cancelled');
  });

  it('speaks the A2A 0.3 JSON-RPC methods at the card URL (message/send, tasks/get, tasks/cancel)', async () => {
    env.fake.enqueue({ text: 'legacy hello' });
    const rpc = (method: string, params: unknown) => env.k.request('/a2a', { method: 'POST', json: { jsonrpc: '2.0', id: 1, method, params } });
    const sent = await json<{ result: { id: string; kind: string; status: { state: string; message: { parts: Array<{ kind: string; text: string }> } } } }>(
      await rpc('message/send', { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } }),
    );
    assert.equal(sent.result.kind, 'task');
    assert.equal(sent.result.status.state, 'completed');
    assert.equal(sent.result.status.message.parts[0].text, 'legacy hello');
    const got = await json<{ result: { id: string; status: { state: string } } }>(await rpc('tasks/get', { id: sent.result.id }));
    assert.equal(got.result.status.state, 'completed');
    const cancel = await json<{ error: { code: number; message: string } }>(await rpc('tasks/cancel', { id: sent.result.id }));
    assert.equal(cancel.error.code, -32002);
    const missing = await json<{ error: { code: number } }>(await rpc('tasks/get', { id: 'nope' }));
    assert.equal(missing.error.code, -32001);
    const bad = await json<{ error: { code: number } }>(await rpc('no/such', {}));
    assert.equal(bad.error.code, -32601);
  });

  it('POST /a2a/tasks/send answers the spec shape; GET and cancel follow the task', async () => {
    env.fake.enqueue({ text: 'spec reply' });
    const res = await env.k.request('/a2a/tasks/send', { method: 'POST', json: { agent_id: agentId, message: { role: 'user', parts: [{ text: 'hello' }] } } });
    assert.equal(res.status, 200);
    const task = await json<TaskView>(res);
    assert.equal(task.status, 'completed');
    assert.deepEqual(task.result, { role: 'agent', parts: [{ text: 'spec reply' }] });
    const got = await json<TaskView>(await env.k.request(`/a2a/tasks/${task.task_id}`));
    assert.equal(got.task_id, task.task_id);
    assert.equal(got.agent_id, agentId);
    const done = await env.k.request(`/a2a/tasks/${task.task_id}/cancel`, { method: 'POST' });
    assert.equal(done.status, 409);

    env.fake.enqueue({ text: 'never', delayMs: 3000 });
    const pending = await json<TaskView>(
      await env.k.request('/a2a/tasks/send', {
        method: 'POST',
        json: { params: { agentId: 'scout', message: { parts: [{ text: 'slow' }] } }, blocking: false },
      }),
    );
    assert.notEqual(pending.status, 'completed');
    const state = async () => (await json<TaskView>(await env.k.request(`/a2a/tasks/${pending.task_id}`))).status;
    await waitFor(async () => (await state()) === 'working', 3000, 'the task to run');
    const cancel = await env.k.request(`/a2a/tasks/${pending.task_id}/cancel`, { method: 'POST' });
    assert.equal(cancel.status, 200);
    assert.deepEqual(
      Object.entries(await json(cancel)).filter(([k]) => k === 'task_id' || k === 'status'),
      [
        ['task_id', pending.task_id],
        ['status', 'cancelled'],
      ],
    );
  });

  it('refuses bad task requests with 4xx naming the problem', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{}, 400, /agent_id/],
      [{ agent_id: 'nobody', message: 'hi' }, 404, /nobody/],
      [{ agent_id: agentId }, 400, /message/],
      [{ agent_id: agentId, message: { role: 'user', parts: [] } }, 400, /text/],
      [{ agent_id: agentId, message: { parts: 'x' } }, 400, /parts|message/],
    ];
    for (const [body, status, pattern] of cases) {
      const res = await env.k.request('/a2a/tasks/send', { method: 'POST', json: body });
      assert.equal(res.status, status, JSON.stringify(body));
      assert.match((await json<{ error: string }>(res)).error, pattern);
    }
    assert.equal((await env.k.request('/a2a/tasks/nope')).status, 404);
    assert.equal((await env.k.request('/a2a/tasks/nope/cancel', { method: 'POST' })).status, 404);
    assert.equal((await env.k.request('/a2a/agents/nope/.well-known/agent-card.json')).status, 404);
  });
});

describe('A2A server with an api_key', () => {
  const KEY = 'k-0123456789abcdef-a2a-key';
  let env: Env;
  let guarded: string;
  before(async () => {
    env = await startEnv(`api_key = "${KEY}"`);
    guarded = await spawnAgent(env.k, 'guarded', '[]', { authorization: `Bearer ${KEY}` });
  });
  after(() => stopEnv(env));

  const cards = (id: string) => [
    '/.well-known/agent.json',
    '/.well-known/agent-card.json',
    `/a2a/agents/${id}/.well-known/agent.json`,
    `/a2a/agents/${id}/.well-known/agent-card.json`,
  ];

  it('the cards need the bearer (they list the agents); with it they name the bearer scheme', async () => {
    for (const path of cards(guarded)) {
      const bare = await env.k.request(path);
      assert.equal(bare.status, 401, path);
      assert.equal(typeof (await json<{ error: unknown }>(bare)).error, 'string');
      assert.equal((await env.k.request(path, { headers: { authorization: 'Bearer not-the-key-0123456789' } })).status, 401, path);
      assert.equal((await env.k.request(path, { headers: { authorization: `Bearer ${KEY}` } })).status, 200, path);
    }
    const card = await env.k.request('/.well-known/agent.json', { headers: { authorization: `Bearer ${KEY}` } });
    const body = await json<{ securitySchemes: Record<string, { scheme: string }>; skills: unknown[] }>(card);
    assert.equal(body.securitySchemes.bearer.scheme, 'bearer');
    assert.equal(body.skills.length, 1);
  });

  it('[a2a] public_card = true publishes the cards (read per request); tasks and JSON-RPC still need the bearer', async () => {
    await setConfig(env.k, 'a2a.public_card', true);
    try {
      for (const path of cards(guarded)) assert.equal((await env.k.request(path)).status, 200, path);
    } finally {
      await setConfig(env.k, 'a2a.public_card', false);
    }
    assert.equal((await env.k.request('/.well-known/agent.json')).status, 401, 'closed again at once');
    assert.equal((await env.k.request('/a2a/agents')).status, 401);
    assert.equal((await env.k.request('/a2a', { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } } })).status, 401);
    assert.equal((await env.k.request('/a2a/tasks/send', { method: 'POST', json: { agent_id: 'guarded', message: 'hi' } })).status, 401);
    env.fake.enqueue({ text: 'authorised' });
    const ok = await env.k.request('/a2a/tasks/send', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      json: { agent_id: 'guarded', message: 'hi' },
    });
    assert.equal(ok.status, 200);
    assert.equal((await json<TaskView>(ok)).result?.parts[0].text, 'authorised');
  });
});

describe('A2A tasks across a restart', () => {
  it('finished tasks are kept; a task cut off by the stop is failed at the next start', async () => {
    let first: Env | undefined = await startEnv('', [], { keepHome: true });
    let second: Env | undefined;
    const home = first.k.home;
    try {
      const id = await spawnAgent(first.k, 'keeper');
      first.fake.enqueue({ text: 'kept answer' });
      const send = (body: unknown) => first!.k.request('/a2a/tasks/send', { method: 'POST', json: body });
      const done = await json<TaskView>(await send({ agent_id: id, message: 'remember this' }));
      assert.equal(done.status, 'completed');
      first.fake.enqueue({ text: 'never sent', delayMs: 5000 });
      const running = await json<TaskView>(await send({ agent_id: id, message: 'slow', blocking: false }));
      await waitFor(async () => (await json<TaskView>(await first!.k.request(`/a2a/tasks/${running.task_id}`))).status === 'working', 3000, 'working');
      await stopEnv(first);
      first = undefined;
      second = await startEnv('', [], { home });
      const kept = await json<TaskView>(await second.k.request(`/a2a/tasks/${done.task_id}`));
      assert.deepEqual([kept.status, kept.result?.parts[0].text], ['completed', 'kept answer']);
      assert.equal((await json<TaskView>(await second.k.request(`/a2a/tasks/${running.task_id}`))).status, 'failed');
    } finally {
      await stopEnv(first);
      await stopEnv(second);
      rmSync(home, { recursive: true, force: true });
    }
  });
});
