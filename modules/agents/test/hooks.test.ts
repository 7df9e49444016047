import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { json, readSse, spawn, startEnv, stopEnv, waitFor, type Env } from './helpers.ts';
import type { AgentTools } from '@talon/agents';
import type { Probe } from './fixtures/hooks-probe-module/index.ts';

describe('agents: hooks', () => {
  let env: Env;
  let probe: Probe;
  before(async () => {
    env = await startEnv({ echo: true, modules: ['hooks-probe'] });
    probe = env.k.kernel.services.view<Probe>('hooks-probe.records');
  });
  after(() => stopEnv(env));

  test('every hook fires at its moment; afterTurn runs off the request path', async () => {
    const { agent_id } = await spawn(env.k, 'hooked');
    probe.events.length = 0;
    env.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'final' });
    const before = env.fake.requests.length;
    const reply = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'hi' } }));
    assert.equal(reply.response, 'final');
    // afterTurn waits 500 ms in the probe: the reply came first.
    assert.deepEqual(probe.events, ['received:hi', 'beforeTurn:hi', 'beforeModelCall', 'beforeToolCall:echo', 'afterToolCall:echo:echo: x', 'beforeModelCall']);
    await waitFor(() => probe.events.includes('afterTurn:hi->final'));
    const system = (env.fake.requests[before].body as { messages: Array<{ content: string }> }).messages[0].content;
    assert.match(system, /\[recalled: the user likes tea\]/);
    await env.k.request(`/api/agents/${agent_id}`, { method: 'DELETE' });
    assert.ok(probe.events.includes('terminated:hooked'));
    assert.ok(!probe.events.includes('spawned:hooked'));
    await spawn(env.k, 'hooked-2');
    assert.ok(probe.events.includes('spawned:hooked-2'));
  });

  test('authorizeToolCall can refuse a tool (the model gets the reason), toolResult can rewrite what the model gets back', async () => {
    const { agent_id } = await spawn(env.k, 'gated');
    probe.events.length = 0;
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'echo', input: { text: 'forbidden' } },
          { name: 'echo', input: { text: 'scan' } },
        ],
      },
      { text: 'done' },
    );
    const before = env.fake.requests.length;
    await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'go' } }));
    const results = JSON.stringify(env.fake.requests[before + 1].body);
    assert.match(results, /Tool 'echo' was not run: the probe refuses it/);
    assert.match(results, /echo: scan \[scanned\]/);
    assert.deepEqual(
      probe.events.filter((e) => e.startsWith('beforeToolCall')),
      ['beforeToolCall:echo'],
      'a refused call never reaches beforeToolCall',
    );
  });

  test('the agents module publishes its events on the bus', async () => {
    probe.bus.length = 0;
    const { agent_id } = await spawn(env.k, 'busy');
    env.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'all done' });
    await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'hello bus' } }));
    await env.k.request(`/api/agents/${agent_id}`, { method: 'DELETE' });
    await waitFor(() => probe.bus.includes('agent.terminated:busy'));
    assert.deepEqual(probe.bus, ['agent.spawned:busy', 'message.received:hello bus', 'tool.invoked:echo', 'turn.completed:all done', 'agent.terminated:busy']);
  });

  test('a beforeTurn refusal answers with its status and error (blocking and stream)', async () => {
    const { agent_id } = await spawn(env.k, 'refused');
    let res = await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'forbidden thing' } });
    assert.equal(res.status, 402);
    assert.deepEqual(await res.json(), { error: 'budget exceeded for this agent' });
    res = await env.k.request(`/api/agents/${agent_id}/message/stream`, { method: 'POST', json: { message: 'forbidden thing' } });
    assert.equal(res.status, 402);
    const session = await json<{ message_count: number }>(await env.k.request(`/api/agents/${agent_id}/session`));
    assert.equal(session.message_count, 0, 'a refused turn leaves no message');
  });

  test('an LLM refusal (LlmRefusedError) reaches the client with its status', async () => {
    const { agent_id } = await spawn(env.k, 'quota');
    probe.refuseNextLlmCall({ status: 429, error: 'hourly token quota exceeded' });
    const res = await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'x' } });
    assert.equal(res.status, 429);
    assert.match((await json(res)).error as string, /hourly token quota exceeded/);
    probe.refuseNextLlmCall({ status: 429, error: 'hourly token quota exceeded' });
    const events = await readSse(await env.k.request(`/api/agents/${agent_id}/message/stream`, { method: 'POST', json: { message: 'x' } }));
    assert.deepEqual(events.at(-1), { event: 'error', data: { error: 'hourly token quota exceeded', status: 429 } });
  });

  test('a direct invocation (agents.tools) runs the tool the way the loop does: grant, input check, hooks around it', async () => {
    const tools = env.k.kernel.services.view<AgentTools>('agents.tools');
    const { agent_id } = await spawn(env.k, 'invoked');
    const signal = new AbortController().signal;
    probe.events.length = 0;
    const result = await tools.invoke({ tool: 'say', input: { text: 'hi' }, agentId: agent_id, signal, origin: 'test' });
    assert.deepEqual(result, { tool: 'echo', output: { content: 'echo: hi' }, ownerNotices: [] });
    assert.deepEqual(probe.events, ['beforeToolCall:echo', 'afterToolCall:echo:echo: hi']);
    const notice = await tools.invoke({ tool: 'notify_owner', input: { reason: 'r', summary: 's' }, agentId: agent_id, signal, origin: 'test' });
    assert.deepEqual(notice.ownerNotices, ['[NOTIFY] r: s']);
    const status = (request: Parameters<AgentTools['invoke']>[0]) =>
      tools.invoke(request).then(
        () => 200,
        (err: { statusCode: number }) => err.statusCode,
      );
    probe.events.length = 0;
    assert.equal(await status({ tool: 'echo', input: { text: 1 }, agentId: agent_id, signal, origin: 'test' }), 400, 'input against the schema');
    assert.equal(await status({ tool: 'notify_owner', input: { reason: 'r', summary: 's' }, signal, origin: 'test' }), 400, 'a tool that acts for an agent');
    assert.equal(await status({ tool: 'nothing', input: {}, agentId: agent_id, signal, origin: 'test' }), 404);
    assert.equal(await status({ tool: 'echo', input: {}, agentId: '00000000-0000-4000-8000-000000000000', signal, origin: 'test' }), 404);
    const res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "no-echo"\n[capabilities]\ntools = ["slow"]\n' } });
    const limited = (await json<{ agent_id: string }>(res)).agent_id;
    probe.events.length = 0;
    assert.equal(await status({ tool: 'echo', input: {}, agentId: limited, signal, origin: 'test' }), 403);
    assert.deepEqual(probe.events, [], 'a refused call runs no hook');
  });
});
