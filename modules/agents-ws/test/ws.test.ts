import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { waitFor } from '@talon/testing';
import { agentHooks, sessionStore, type SessionStore, type ToolDefinition } from '@talon/agents';
import { startHarness, type Harness } from './harness.ts';
import { Client, type Frame } from './client.ts';

const ONLY = ['agents-ws', 'commands', 'usage', 'agents', 'catalog', 'llm', 'llm-openai', 'error-envelope'];

const echoTool: ToolDefinition = {
  name: 'echo',
  description: 'Echoes its input',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  execute: async (input) => ({ content: String(input.text) }),
};

/** Raises an owner notice, the way notify_owner does (granted to every agent). */
const noticeTool: ToolDefinition = {
  name: 'notice',
  description: 'Tells the owner something privately',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  grantedTo: () => true,
  execute: async (input, ctx) => {
    ctx.notifyOwner(String(input.text));
    return { content: 'queued' };
  },
};

describe('WebSocket chat (GET /api/agents/{id}/ws)', () => {
  let h: Harness;
  let agent: string;
  let wsUrl: string;
  const clients: Client[] = [];
  const open = async (id = agent) => {
    const c = await Client.open(`${wsUrl}/api/agents/${id}/ws`);
    clients.push(c);
    return c;
  };

  before(async () => {
    h = await startHarness(ONLY, '[agents_ws]\nagents_updated_interval_ms = 100\n');
    const hooks = h.kernel.kernel.hooks.catalogue(agentHooks.id)!.hooks as ReturnType<(typeof agentHooks)['create']>;
    hooks.tools.tap('ws-test', (list) => [...list, echoTool, noticeTool]);
    agent = await h.spawn('wsagent', '');
    await h.spawn('other');
    wsUrl = h.kernel.url.replace(/^http/, 'ws');
  });
  after(async () => {
    for (const c of clients) c.ws.terminate();
    await h.stop();
  });

  const refusedStatus = (url: string) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once('open', () => reject(new Error('upgrade should have been refused')));
      ws.once('error', () => undefined);
    });

  it('refuses the upgrade with 400 for an invalid id and 404 for an unknown agent', async () => {
    assert.equal(await refusedStatus(`${wsUrl}/api/agents/not-a-uuid/ws`), 400);
    assert.equal(await refusedStatus(`${wsUrl}/api/agents/${randomUUID()}/ws`), 404);
    const plain = await h.json<{ error: unknown }>(`/api/agents/${agent}/ws`);
    assert.equal(plain.status, 426);
    assert.equal(typeof plain.body.error, 'string');
    const unknown = await h.json<{ error: unknown }>(`/api/agents/${randomUUID()}/ws`);
    assert.equal(unknown.status, 404);
    assert.equal(typeof unknown.body.error, 'string');
  });

  it('greets with connected and answers ping with pong', async () => {
    const c = await open();
    assert.deepEqual(await c.next(), { type: 'connected', agent_id: agent });
    c.send({ type: 'ping' });
    assert.deepEqual(await c.next(), { type: 'pong' });
  });

  it('runs a turn: thinking, text_delta..., response with tokens and cost', async () => {
    const c = await open();
    await c.next();
    h.fake.enqueue({ text: 'Hello over the socket', chunkSize: 6, usage: { input: 40, output: 8 } });
    c.send({ type: 'message', content: 'hi' });
    assert.deepEqual(await c.next(), { type: 'thinking' });
    const deltas: string[] = [];
    let frame = await c.next();
    while (frame.type === 'text_delta') {
      deltas.push(frame.content as string);
      frame = await c.next();
    }
    assert.ok(deltas.length >= 2, `deltas ${JSON.stringify(deltas)}`);
    assert.equal(deltas.join(''), 'Hello over the socket');
    assert.equal(frame.type, 'response');
    assert.equal(frame.content, 'Hello over the socket');
    assert.equal(frame.input_tokens, 40);
    assert.equal(frame.output_tokens, 8);
    assert.equal(frame.iterations, 1);
    assert.equal(typeof frame.cost_usd, 'number', JSON.stringify(frame));
    // The agents module prices turns (streamed ones with the model name the provider echoes: 'fake' here).
    assert.ok((frame.cost_usd as number) >= 0, JSON.stringify(frame));
  });

  it('accepts plain non-JSON text as a message and reports tool_start', async () => {
    const c = await open();
    await c.next();
    h.fake.enqueue({ toolCalls: [{ name: 'echo', input: { text: 'ping' } }] }, { text: 'echoed' });
    c.send('please echo');
    assert.equal((await c.next()).type, 'thinking');
    const frames: Frame[] = [];
    for (let f = await c.next(); ; f = await c.next()) {
      frames.push(f);
      if (f.type === 'response' || f.type === 'error') break;
    }
    const sent = h.fake.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    assert.ok(JSON.stringify(sent).includes('please echo'));
    // The agent has no tool grants: the call fails as a tool result, but the frame announces it all the same.
    assert.deepEqual(
      frames.find((f) => f.type === 'tool_start'),
      { type: 'tool_start', tool: 'echo' },
    );
    assert.equal(frames.at(-1)!.type, 'response');
    assert.equal(frames.at(-1)!.iterations, 2);
  });

  it('delivers owner notices as an owner_notice frame right before the response, apart from the chat', async () => {
    const c = await open();
    await c.next();
    h.fake.enqueue(
      {
        toolCalls: [
          { name: 'notice', input: { text: '[NOTIFY] disk: almost full' } },
          { name: 'notice', input: { text: '[NOTIFY] job: done' } },
        ],
      },
      { text: 'all set' },
    );
    c.send({ type: 'message', content: 'check the disk' });
    const frames: Frame[] = [];
    for (let f = await c.next(); f.type !== 'response' && f.type !== 'error'; f = await c.next()) frames.push(f);
    assert.deepEqual(frames.at(-1), { type: 'owner_notice', content: '[NOTIFY] disk: almost full\n\n[NOTIFY] job: done' });
    assert.equal(frames.filter((f) => f.type === 'owner_notice').length, 1);
    assert.ok(!frames.some((f) => f.type === 'text_delta' && String(f.content).includes('NOTIFY')), 'not in the chat');
  });

  it('sends an error frame when the turn fails, and for unknown frame types', async () => {
    const c = await open();
    await c.next();
    h.fake.enqueue({ status: 500 });
    c.send({ type: 'message', content: 'break' });
    assert.equal((await c.next()).type, 'thinking');
    const err = await c.next();
    assert.equal(err.type, 'error');
    assert.equal(typeof err.content, 'string');
    c.send({ type: 'dance' });
    const unknown = await c.next();
    assert.equal(unknown.type, 'error');
    assert.match(String(unknown.content), /unknown message type/);
    c.send({ type: 'message' });
    assert.equal((await c.next()).type, 'error');
  });

  it('sends agents_updated periodically with summaries without created_at', async () => {
    const c = await open();
    await c.next();
    const started = Date.now();
    const first = await c.nextOf('agents_updated');
    await c.nextOf('agents_updated');
    assert.ok(Date.now() - started < 2000);
    const agents = first.agents as Array<Record<string, unknown>>;
    const mine = agents.find((a) => a.id === agent)!;
    assert.deepEqual(Object.keys(mine).sort(), ['id', 'model_name', 'model_provider', 'name', 'state']);
    assert.equal(mine.name, 'wsagent');
    assert.equal(mine.model_provider, 'openai');
    assert.equal(mine.model_name, 'gpt-4o-mini');
    assert.ok(agents.some((a) => a.name === 'other'));
  });

  it('answers every slash command with a command_result frame', async () => {
    const c = await open();
    await c.next();
    const sessions = h.kernel.kernel.services.view<SessionStore>(sessionStore.id);

    const before = (await h.json<{ session_id: string }>(`/api/agents/${agent}`)).body.session_id;
    const fresh = await c.command('/new');
    assert.equal(fresh.type, 'command_result');
    assert.equal(fresh.command, 'new');
    assert.equal(typeof fresh.session_id, 'string');
    assert.notEqual(fresh.session_id, before);
    assert.equal((await h.json<{ session_id: string }>(`/api/agents/${agent}`)).body.session_id, fresh.session_id);
    assert.ok(await sessions.exists(agent, before), 'the prior session stays resumable');

    const compact = await c.command('/compact');
    assert.equal(compact.type, 'command_result', JSON.stringify(compact));
    assert.equal(typeof compact.message, 'string');

    const current = await c.command('/model');
    assert.deepEqual(current.model, { provider: 'openai', model: 'gpt-4o-mini' });
    const changed = await c.command('/model gpt-4.1');
    assert.equal(changed.type, 'command_result', JSON.stringify(changed));
    assert.equal((changed.model as { model: string }).model, 'gpt-4.1');
    assert.equal((await c.command('/model no-such-model-xyz')).type, 'error');

    const stop = await c.command('/stop');
    assert.equal(stop.command, 'stop');
    assert.equal(stop.stopped, false);

    const usage = await c.command('/usage');
    assert.equal(usage.command, 'usage');
    assert.equal(typeof (usage.today as { input_tokens: number }).input_tokens, 'number');
    assert.ok((usage.today as { requests: number }).requests >= 1);
    assert.equal(typeof (usage.quota as { hourly_reset_at: string }).hourly_reset_at, 'string');

    assert.equal((await c.command('/think')).enabled, true);
    assert.equal((await c.command('/think')).enabled, false);
    c.send({ type: 'command', command: 'think', args: 'on' });
    assert.equal((await c.next()).enabled, true);

    const models = await c.command('/models');
    assert.ok((models.models as Array<{ id: string }>).some((m) => m.id === 'gpt-4o-mini'));
    const providers = await c.command('/providers');
    assert.ok((providers.providers as Array<{ name: string }>).some((p) => p.name === 'openai'));

    const unknown = await c.command('/dance');
    assert.equal(unknown.type, 'error');
    assert.match(String(unknown.content), /unknown command/);
  });

  it('aborts the running turn when the client goes away', async () => {
    const c = await open();
    await c.next();
    h.fake.enqueue({ text: 'too late', delayMs: 3000 });
    c.send({ type: 'message', content: 'slow one' });
    assert.equal((await c.next()).type, 'thinking');
    await waitFor(() => JSON.stringify(h.fake.requests.at(-1)?.body ?? {}).includes('slow one'), 5000, 'the slow turn to reach the provider');
    const upstream = h.fake.requests.at(-1)!;
    c.ws.close();
    await waitFor(() => upstream.aborted, 5000, 'the provider request to be cancelled');
    assert.ok(upstream.aborted, 'the provider request was cancelled');
  });

  it('closes sockets cleanly when the service stops', async () => {
    const c = await open();
    await c.next();
    await h.kernel.stop();
    await waitFor(() => c.closed, 5000, 'the close at the client');
    assert.ok(c.closed, 'the client saw the close');
    assert.equal(c.closed.code, 1001);
  });
});
