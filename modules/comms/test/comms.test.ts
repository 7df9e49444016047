import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import type { AgentRegistry } from '@talon/agents';

const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;
const manifest = (name: string) => `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n`;

describe('comms', () => {
  let k: AgentTestKernel;
  let boss: string;
  let worker: string;
  before(async () => {
    k = await startAgentTestKernel({ only: ['comms', 'agents', 'tools', 'error-envelope'], config: '[comms]\nkeep_alive_secs = 1\nmax_streams = 1\n' });
    const registry = k.kernel.services.view<AgentRegistry>('agents.registry');
    boss = (await registry.spawn({ manifestToml: manifest('boss') })).id;
    worker = (await registry.spawn({ manifestToml: manifest('worker'), parentId: boss })).id;
  });
  after(async () => {
    await k.stop();
  });

  test('send delivers to an agent and answers with its reply; the message is logged and becomes an edge', async () => {
    k.fake.enqueue({ text: 'on it', usage: { input: 7, output: 2 } });
    const res = await k.request('/api/comms/send', { method: 'POST', json: { to: `agent:${worker}`, content: 'please summarise', from: 'agent:boss' } });
    assert.equal(res.status, 200);
    const reply = await json(res);
    assert.deepEqual(reply, { ok: true, to: `agent:${worker}`, agent_id: worker, response: 'on it', input_tokens: 7, output_tokens: 2 });
    assert.match(JSON.stringify(k.fake.requests.at(-1)!.body), /\[message from agent boss\]\\nplease summarise/);
    const events = await json<{ items: Array<{ kind: string; source_name: string; target_id: string; detail: string }> }>(
      await k.request('/api/comms/events?limit=5'),
    );
    assert.deepEqual(
      { kind: events.items[0].kind, source_name: events.items[0].source_name, target_id: events.items[0].target_id, detail: events.items[0].detail },
      { kind: 'agent_message', source_name: 'boss', target_id: worker, detail: 'please summarise' },
    );
    const topology = await json<{
      nodes: Array<{ id: string; parent_id: string | null }>;
      edges: Array<{ from: string; to: string; kind: string }>;
      routes: Array<{ address: string; via: string }>;
    }>(await k.request('/api/comms/topology'));
    assert.equal(topology.nodes.find((n) => n.id === worker)!.parent_id, boss);
    assert.ok(topology.edges.some((e) => e.kind === 'parent_child' && e.from === boss && e.to === worker));
    assert.ok(topology.edges.some((e) => e.kind === 'message' && e.from === boss && e.to === worker));
    assert.ok(topology.routes.some((r) => r.address === `agent:${worker}` && r.via === 'local'));
  });

  test('events: a limit above 500 is capped at 500, not refused; without one the page is 100', async () => {
    const page = async (query: string) => json<{ limit: number; items: unknown[] }>(await k.request(`/api/comms/events${query}`));
    assert.equal((await page('?limit=100000')).limit, 500);
    assert.equal((await page('?limit=501')).limit, 500);
    assert.equal((await page('?limit=7')).limit, 7);
    assert.equal((await page('')).limit, 100);
  });

  test('an agent_send of one agent to another is a routed message and a message edge', async () => {
    const registry = k.kernel.services.view<AgentRegistry>('agents.registry');
    const caller = (await registry.spawn({ manifestToml: `${manifest('caller')}[capabilities]\ntools = ["agent_send"]\n` })).id;
    k.fake.enqueue({ toolCalls: [{ name: 'agent_send', input: { agent_id: 'worker', message: 'count the files' } }] }, { text: '12 files' }, { text: 'done' });
    const res = await k.request(`/api/agents/${caller}/message`, { method: 'POST', json: { message: 'ask the worker' } });
    assert.equal(res.status, 200);
    const events = await json<{ items: Array<{ kind: string; source_id: string; target_id: string; detail: string }> }>(
      await k.request('/api/comms/events?limit=5'),
    );
    assert.ok(
      events.items.some((e) => e.kind === 'agent_message' && e.source_id === caller && e.target_id === worker && e.detail === 'count the files'),
      JSON.stringify(events.items),
    );
    const topology = await json<{ edges: Array<{ from: string; to: string; kind: string }> }>(await k.request('/api/comms/topology'));
    assert.ok(topology.edges.some((e) => e.kind === 'message' && e.from === caller && e.to === worker));
  });

  test('spawns and kills appear in the events; send by name', async () => {
    const registry = k.kernel.services.view<AgentRegistry>('agents.registry');
    const temp = (await registry.spawn({ manifestToml: manifest('temp') })).id;
    await registry.kill(temp);
    await waitFor(
      async () =>
        (await json<{ items: Array<{ kind: string; target_id: string }> }>(await k.request('/api/comms/events'))).items.some(
          (e) => e.kind === 'agent_terminated' && e.target_id === temp,
        ),
      2000,
      'events',
    );
    k.fake.enqueue({ text: 'hi boss' });
    assert.equal((await json(await k.request('/api/comms/send', { method: 'POST', json: { to: 'agent:boss', content: 'hello' } }))).response, 'hi boss');
  });

  test('the stream sends live events and keep-alives', async () => {
    const ac = new AbortController();
    const res = await k.request('/api/comms/events/stream', { signal: ac.signal });
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    let text = '';
    const read = async (until: (t: string) => boolean) => {
      const deadline = Date.now() + 3000;
      while (!until(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    };
    k.fake.enqueue({ text: 'streamed' });
    await k.request('/api/comms/send', { method: 'POST', json: { to: `agent:${worker}`, content: 'live one' } });
    await read((t) => t.includes('live one'));
    assert.match(text, /^data: \{.*"kind":"agent_message".*"detail":"live one"/m);
    await read((t) => t.includes(': keep-alive'));
    assert.match(text, /: keep-alive/);
    const second = await k.request('/api/comms/events/stream');
    assert.equal(second.status, 429, 'more streams than [comms] max_streams');
    assert.ok(Number(second.headers.get('retry-after')) > 0);
    assert.match((await json<{ error: string }>(second)).error, /too many comms streams/);
    ac.abort();
  });

  test('bad input: 400 for bodies and addresses, 404 for unknown agents and peers', async () => {
    const send = (body: unknown) => k.request('/api/comms/send', { method: 'POST', json: body });
    assert.equal((await send({})).status, 400);
    assert.equal((await send({ to: 'bob', content: 'x' })).status, 400);
    assert.equal((await send({ to: 'agent:nobody', content: 'x' })).status, 404);
    assert.equal((await send({ to: 'peer:n1/agent:x', content: 'x' })).status, 404);
    for (const bad of ['0', 'abc', '1.5']) assert.equal((await k.request(`/api/comms/events?limit=${bad}`)).status, 400, bad);
  });
});
