import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { json, spawn, startEnv, stopEnv, waitFor, type Env } from './helpers.ts';
import { slowProbe, type SlowProbe } from './fixtures/echo-tool-module/index.ts';

type Reply = { response: string; interrupted?: boolean; iterations: number; session_id: string };
type Session = { messages: Array<{ role: string; content: string; tool_calls?: unknown[]; tool_results?: Array<{ content: string }> }> };

describe('agents: interrupt and stop', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ echo: true });
  });
  after(() => stopEnv(env));

  const send = (id: string, message: string, sessionId?: string) =>
    env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message, ...(sessionId && { session_id: sessionId }) } });
  const interrupt = (id: string, sid: string) => env.k.request(`/api/agents/${id}/sessions/${sid}/interrupt`, { method: 'POST' });
  const sessionOf = async (id: string) => (await json<{ session_id: string }>(await env.k.request(`/api/agents/${id}`))).session_id;
  /** Resolves once the `slow` tool runs. */
  const slowRuns = () => waitFor(() => env.k.kernel.services.view<SlowProbe>(slowProbe.id).running > 0);
  const results = async (id: string) => {
    const s = await json<Session>(await env.k.request(`/api/agents/${id}/session`));
    return s.messages.flatMap((m) => (m.tool_results ?? []).map((r) => r.content));
  };

  test('during an LLM call: the call completes, then the loop exits before the tool runs', async () => {
    const { agent_id } = await spawn(env.k, 'int-llm');
    const sid = await sessionOf(agent_id);
    env.fake.enqueue({ text: 'Let me check.', toolCalls: [{ name: 'echo', input: { text: 'x' } }], delayMs: 1500 });
    const before = env.fake.requests.length;
    const pending = send(agent_id, 'go');
    await waitFor(() => env.fake.requests.length > before);
    const res = await interrupt(agent_id, sid);
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    const reply = await json<Reply>(await pending);
    assert.equal(reply.interrupted, true);
    assert.equal(reply.response, 'Let me check.');
    assert.equal(env.fake.requests.length, before + 1, 'no further model call');
    assert.ok(
      (await results(agent_id)).every((r) => !r.startsWith('echo:')),
      'the tool did not run',
    );
  });

  test('during a tool execution: the tool runs to completion, then the loop exits (no further tool, no further model call)', async () => {
    const { agent_id } = await spawn(env.k, 'int-tool');
    const sid = await sessionOf(agent_id);
    env.fake.enqueue({
      text: 'Working.',
      toolCalls: [
        { name: 'slow', input: { ms: 400 } },
        { name: 'echo', input: { text: 'after' } },
      ],
    });
    const before = env.fake.requests.length;
    const pending = send(agent_id, 'go');
    await slowRuns();
    assert.equal((await interrupt(agent_id, sid)).status, 204);
    const reply = await json<Reply>(await pending);
    assert.equal(reply.interrupted, true);
    assert.equal(reply.response, 'Working.', 'the partial response is recorded');
    assert.equal(env.fake.requests.length, before + 1);
    const r = await results(agent_id);
    assert.ok(r.includes('slept 400'), 'the running tool completed');
    assert.ok(!r.some((x) => x.startsWith('echo:')), 'the next tool did not run');
    // The stored session stays valid for the next turn: every tool call has a result.
    env.fake.enqueue({ text: 'fine' });
    assert.equal((await send(agent_id, 'again')).status, 200);
  });

  test('between tool calls: the loop exits at the next boundary', async () => {
    const { agent_id } = await spawn(env.k, 'int-between');
    const sid = await sessionOf(agent_id);
    env.fake.enqueue({
      toolCalls: [
        { name: 'echo', input: { text: 'a' } },
        { name: 'slow', input: { ms: 300 } },
        { name: 'echo', input: { text: 'b' } },
        { name: 'echo', input: { text: 'c' } },
      ],
    });
    const pending = send(agent_id, 'go');
    await slowRuns();
    await interrupt(agent_id, sid);
    const reply = await json<Reply>(await pending);
    assert.equal(reply.interrupted, true);
    const r = await results(agent_id);
    assert.ok(r.includes('echo: a'));
    assert.ok(!r.includes('echo: b') && !r.includes('echo: c'));
  });

  test('turn already finished: the flag is ignored, no error, and it does not carry over', async () => {
    const { agent_id } = await spawn(env.k, 'int-finished');
    const sid = await sessionOf(agent_id);
    env.fake.enqueue({ text: 'final answer', delayMs: 300 });
    const before = env.fake.requests.length;
    const pending = send(agent_id, 'go');
    await waitFor(() => env.fake.requests.length > before);
    assert.equal((await interrupt(agent_id, sid)).status, 204);
    const reply = await json<Reply>(await pending);
    assert.equal(reply.response, 'final answer');
    assert.equal(reply.interrupted, undefined);
    env.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: 'next' } }] }, { text: 'ok' });
    const next = await json<Reply>(await send(agent_id, 'next'));
    assert.equal(next.interrupted, undefined);
    assert.ok((await results(agent_id)).includes('echo: next'));
  });

  test('no active turn: still 204; the flag stays set and affects the next turn, whose message then clears it', async () => {
    const { agent_id } = await spawn(env.k, 'int-idle');
    const sid = await sessionOf(agent_id);
    assert.equal((await interrupt(agent_id, sid)).status, 204);
    env.fake.enqueue({ text: 'Starting.', toolCalls: [{ name: 'echo', input: { text: 'first' } }] });
    const first = await json<Reply>(await send(agent_id, 'one'));
    assert.equal(first.interrupted, true);
    assert.ok(!(await results(agent_id)).includes('echo: first'));
    env.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: 'second' } }] }, { text: 'done' });
    const second = await json<Reply>(await send(agent_id, 'two'));
    assert.equal(second.interrupted, undefined);
    assert.equal(second.response, 'done');
    assert.ok((await results(agent_id)).includes('echo: second'));
  });

  test('a session reset clears the flag', async () => {
    const { agent_id } = await spawn(env.k, 'int-reset');
    const sid = await sessionOf(agent_id);
    await interrupt(agent_id, sid);
    const reset = await json<{ new_session_id: string }>(await env.k.request(`/api/agents/${agent_id}/session/reset`, { method: 'POST' }));
    assert.notEqual(reset.new_session_id, sid);
    env.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: 'old' } }] }, { text: 'ok' });
    const reply = await json<Reply>(await send(agent_id, 'back in the old session', sid));
    assert.equal(reply.interrupted, undefined);
    assert.equal(reply.response, 'ok');
  });

  test('interrupt answers 204 whatever the state of the turn; an unknown agent → 404; malformed ids → 400', async () => {
    const { agent_id } = await spawn(env.k, 'idle-interrupt');
    assert.equal((await interrupt(agent_id, '00000000-0000-4000-8000-000000000001')).status, 204);
    assert.equal((await interrupt('00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000001')).status, 404);
    assert.equal((await interrupt('nope', '00000000-0000-4000-8000-000000000001')).status, 400);
  });

  test('stop aborts the provider request in progress', async () => {
    const { agent_id } = await spawn(env.k, 'stopper');
    env.fake.enqueue({ text: 'too late', delayMs: 3000 });
    const before = env.fake.requests.length;
    const started = Date.now();
    const pending = send(agent_id, 'go');
    await waitFor(() => env.fake.requests.length > before);
    const res = await env.k.request(`/api/agents/${agent_id}/stop`, { method: 'POST' });
    assert.deepEqual(await res.json(), { status: 'stopped', message: 'Run cancelled' });
    const reply = await json<Reply>(await pending);
    assert.equal(reply.interrupted, true);
    assert.ok(Date.now() - started < 2500, 'the turn ended without waiting for the provider');
    await waitFor(() => env.fake.requests[before].aborted);
    const idle = await json(await env.k.request(`/api/agents/${agent_id}/stop`, { method: 'POST' }));
    assert.deepEqual(idle, { status: 'stopped', message: 'No active run' });
  });

  test('stop propagates to subagents started by the parent turn', async () => {
    const parent = await spawn(env.k, 'parent');
    const child = await spawn(env.k, 'child');
    env.fake.enqueue({ toolCalls: [{ name: 'delegate', input: { agent_id: child.agent_id, message: 'work' } }] }, { text: 'child too late', delayMs: 3000 });
    const before = env.fake.requests.length;
    const pending = send(parent.agent_id, 'delegate it');
    await waitFor(() => env.fake.requests.length >= before + 2);
    await env.k.request(`/api/agents/${parent.agent_id}/stop`, { method: 'POST' });
    const reply = await json<Reply>(await pending);
    assert.equal(reply.interrupted, true);
    await waitFor(() => env.fake.requests[before + 1].aborted);
    assert.equal(env.fake.requests.length, before + 2);
  });
});
