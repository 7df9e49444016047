import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { json, readSse, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type Sent = {
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string } }>;
};

describe('agents: the loop (tools, owner notices, loop guard, errors)', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ echo: true, config: '[agents]\nmax_iterations = 8' });
  });
  after(() => stopEnv(env));

  test('tool calls run in order, results go back to the model, tokens add up', async () => {
    const { agent_id } = await spawn(env.k, 'tooler');
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'echo', input: { text: 'one' } },
          { name: 'say', input: { text: 'two' } },
        ],
        usage: { input: 10, output: 4 },
      },
      { text: 'Both echoed.', usage: { input: 20, output: 6 } },
    );
    const before = env.fake.requests.length;
    const reply = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'echo twice' } }));
    assert.equal(reply.response, 'Both echoed.');
    assert.equal(reply.iterations, 2);
    assert.equal(reply.input_tokens, 30);
    assert.equal(reply.output_tokens, 10);
    const first = env.fake.requests[before].body as Sent;
    assert.deepEqual(first.tools!.map((t) => t.function.name).sort(), ['delegate', 'echo', 'fail', 'notify_owner', 'slow']);
    const second = env.fake.requests[before + 1].body as Sent;
    const toolMsgs = second.messages.filter((m) => m.role === 'tool');
    assert.deepEqual(
      toolMsgs.map((m) => m.content),
      ['echo: one', 'echo: two'],
    );
    const traces = await json<{ traces: Array<{ iterations: number; steps: Array<{ tools: Array<{ tool: string }> }> }> }>(
      await env.k.request(`/api/agents/${agent_id}/traces`),
    );
    assert.equal(traces.traces[0].iterations, 2);
    assert.deepEqual(
      traces.traces[0].steps[0].tools.map((t) => t.tool),
      ['echo', 'echo'],
    );
    const metrics = await json<{ token_usage: { input_tokens: number }; tool_calls: Record<string, number> }>(
      await env.k.request(`/api/agents/${agent_id}/metrics`),
    );
    assert.equal(metrics.token_usage.input_tokens, 30);
    assert.equal(metrics.tool_calls.echo, 2);
    const logs = await json<{ count: number; logs: Array<{ outcome: string }> }>(await env.k.request(`/api/agents/${agent_id}/logs`));
    assert.equal(logs.logs[0].outcome, 'ok');
  });

  test('the manifest tool list filters the tools (aliases resolve); unknown tools get an error result', async () => {
    const res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "limited"\n[capabilities]\ntools = "say"\n' } });
    const { agent_id } = await json<{ agent_id: string }>(res);
    env.fake.enqueue({ toolCalls: [{ name: 'fail', input: {} }] }, { text: 'done' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'go' } });
    const first = env.fake.requests[before].body as Sent;
    assert.deepEqual(
      first.tools!.map((t) => t.function.name),
      ['echo'],
    );
    const second = env.fake.requests[before + 1].body as Sent;
    assert.match(String(second.messages.find((m) => m.role === 'tool')!.content), /unknown tool 'fail'/);
  });

  test('input that does not match the tool schema is an error result naming the problem; the tool does not run', async () => {
    const { agent_id } = await spawn(env.k, 'sloppy');
    env.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: 42 } }] }, { text: 'fixed' });
    const before = env.fake.requests.length;
    const reply = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'go' } }));
    assert.equal(reply.response, 'fixed');
    const result = String((env.fake.requests[before + 1].body as Sent).messages.find((m) => m.role === 'tool')!.content);
    assert.equal(result, "Error: invalid input for tool 'echo': 'text' must be string");
  });

  test('a throwing tool becomes an error result, not a failed turn', async () => {
    const { agent_id } = await spawn(env.k, 'failer');
    env.fake.enqueue({ toolCalls: [{ name: 'fail', input: {} }] }, { text: 'it failed' });
    const before = env.fake.requests.length;
    const reply = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'go' } }));
    assert.equal(reply.response, 'it failed');
    const second = env.fake.requests[before + 1].body as Sent;
    assert.match(String(second.messages.find((m) => m.role === 'tool')!.content), /boom/);
  });

  test('owner notices are joined with a blank line in the blocking reply', async () => {
    const { agent_id } = await spawn(env.k, 'notifier');
    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'notify_owner', input: { reason: 'a', summary: 'first' } },
          { name: 'notify_owner', input: { reason: 'b', summary: 'second' } },
        ],
      },
      { text: 'public answer' },
    );
    const reply = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'go' } }));
    assert.equal(reply.response, 'public answer');
    assert.equal(reply.owner_notice, '[NOTIFY] a: first\n\n[NOTIFY] b: second');
  });

  test('SSE stream: chunk, tool_use, tool_result, owner_notice right before done', async () => {
    const { agent_id } = await spawn(env.k, 'streamer');
    env.fake.enqueue(
      { toolCalls: [{ name: 'notify_owner', input: { reason: 'r', summary: 's' } }] },
      { text: 'streamed reply', usage: { input: 7, output: 2 } },
    );
    const res = await env.k.request(`/api/agents/${agent_id}/message/stream`, { method: 'POST', json: { message: 'go' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/event-stream/);
    const events = await readSse(res);
    const names = events.map((e) => e.event);
    assert.deepEqual(
      names.filter((n) => n !== 'chunk'),
      ['tool_use', 'tool_result', 'owner_notice', 'done'],
    );
    assert.deepEqual(events.find((e) => e.event === 'tool_use')!.data, { tool: 'notify_owner' });
    assert.deepEqual(events.find((e) => e.event === 'tool_result')!.data, { tool: 'notify_owner', input: { reason: 'r', summary: 's' } });
    const text = events
      .filter((e) => e.event === 'chunk')
      .map((e) => e.data.content)
      .join('');
    assert.equal(text, 'streamed reply');
    assert.ok(events.filter((e) => e.event === 'chunk').every((e) => e.data.done === false));
    assert.deepEqual(events.find((e) => e.event === 'owner_notice')!.data, { text: '[NOTIFY] r: s' });
    const done = events.at(-1)!.data as { done: boolean; usage: { input_tokens: number; output_tokens: number } };
    assert.equal(done.done, true);
    assert.deepEqual(done.usage, { input_tokens: 17, output_tokens: 7 });
  });

  test('loop guard: 3rd identical call warns, 5th is blocked (not run)', async () => {
    const { agent_id } = await spawn(env.k, 'looper');
    const call = { name: 'echo', input: { text: 'same', n: 1 } };
    const reordered = { name: 'echo', input: { n: 1, text: 'same' } };
    env.fake.enqueue({ toolCalls: [call, reordered, call, reordered, call] }, { text: 'stopped looping' });
    const before = env.fake.requests.length;
    const reply = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'loop' } }));
    assert.equal(reply.response, 'stopped looping');
    const results = (env.fake.requests[before + 1].body as Sent).messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    assert.equal(results.length, 5);
    assert.doesNotMatch(results[1], /LOOP GUARD/);
    assert.match(results[2], /^echo: same\n\n\[LOOP GUARD\] Warning/);
    assert.match(results[3], /\[LOOP GUARD\] Warning/);
    assert.match(results[4], /Blocked: tool 'echo' called 5 times/);
    const traces = await json<{ traces: Array<{ steps: Array<{ tools: Array<{ verdict: string }> }> }> }>(
      await env.k.request(`/api/agents/${agent_id}/traces`),
    );
    assert.deepEqual(
      traces.traces[0].steps[0].tools.map((t) => t.verdict),
      ['ran', 'ran', 'warned', 'warned', 'blocked'],
    );
  });

  test('loop guard: 30 blocked calls stop the turn with a clear error', async () => {
    const { agent_id } = await spawn(env.k, 'stuck');
    const calls = Array.from({ length: 40 }, () => ({ name: 'echo', input: { text: 'stuck' } }));
    env.fake.enqueue({ toolCalls: calls });
    const res = await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'loop' } });
    assert.equal(res.status, 500);
    assert.match((await json(res)).error as string, /loop guard: 30 tool calls were blocked/);
    // The session stays consistent: every tool call has a result.
    const session = await json<{ messages: Array<{ tool_calls?: unknown[]; tool_results?: unknown[] }> }>(
      await env.k.request(`/api/agents/${agent_id}/session`),
    );
    assert.equal(session.messages[1].tool_calls!.length, 40);
    assert.equal(session.messages[2].tool_results!.length, 40);
  });

  test('iteration cap ends the turn with an error', async () => {
    const { agent_id } = await spawn(env.k, 'capped');
    for (let i = 0; i < 8; i++) env.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: `n${i}` } }] });
    const res = await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'go' } });
    assert.equal(res.status, 500);
    assert.match((await json(res)).error as string, /iteration cap \(8\)/);
  });

  test('provider errors reach the client as 502 {error}, never a hang', async () => {
    const { agent_id } = await spawn(env.k, 'unlucky');
    env.fake.enqueue({ status: 500 });
    let res = await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'go' } });
    assert.equal(res.status, 502);
    assert.match((await json(res)).error as string, /LLM provider error/);
    env.fake.enqueue({ status: 400 });
    res = await env.k.request(`/api/agents/${agent_id}/message/stream`, { method: 'POST', json: { message: 'go' } });
    const events = await readSse(res);
    assert.equal(events.at(-1)!.event, 'error');
    assert.match(String(events.at(-1)!.data.error), /LLM provider error/);
  });
  test('GET /api/turns: the failed turns of every agent, newest first; ?outcome= for others; a bad outcome is a 400', async () => {
    const { agent_id } = await spawn(env.k, 'failing-twice');
    env.fake.enqueue({ status: 500 });
    assert.equal((await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'one' } })).status, 502);
    const failed = await json<{ turns: Array<{ agent_id: string; outcome: string; error: string }>; limit: number }>(await env.k.request('/api/turns?limit=3'));
    assert.equal(failed.limit, 3);
    assert.ok(failed.turns.length >= 2, 'this agent and the agents of the tests before');
    assert.ok(failed.turns.every((t) => t.outcome === 'error'));
    assert.equal(failed.turns[0].agent_id, agent_id, 'newest first');
    assert.match(failed.turns[0].error, /LLM provider error/);
    const ok = await json<{ turns: Array<{ outcome: string }> }>(await env.k.request('/api/turns?outcome=ok'));
    assert.ok(ok.turns.length > 0 && ok.turns.every((t) => t.outcome === 'ok'));
    const bad = await env.k.request('/api/turns?outcome=broken');
    assert.equal(bad.status, 400);
    assert.match((await json(bad)).error as string, /outcome/);
  });
});
