import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { json, readSse, spawn, startEnv, stopEnv, waitFor, type Env } from './helpers.ts';
import type { Probe } from './fixtures/hooks-probe-module/index.ts';

describe('agents: hooks', () => {
  let env: Env;
  let probe: Probe;
  before(async () => {
    env = await startEnv({ echo: true, modules: ['hooks-probe'] });
    probe = env.k.kernel.services.current('probe.records') as Probe;
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
    probe.refuseLlm = { status: 429, error: 'hourly token quota exceeded' };
    const res = await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'x' } });
    assert.equal(res.status, 429);
    assert.match((await json(res)).error as string, /hourly token quota exceeded/);
    probe.refuseLlm = { status: 429, error: 'hourly token quota exceeded' };
    const events = await readSse(await env.k.request(`/api/agents/${agent_id}/message/stream`, { method: 'POST', json: { message: 'x' } }));
    assert.deepEqual(events.at(-1), { event: 'error', data: { error: 'hourly token quota exceeded', status: 429 } });
  });
});
