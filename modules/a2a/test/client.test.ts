/** The A2A client: an A2A SDK server in the test, two instances of this service, SSRF rules, the a2a_send tool. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { Role, type AgentCard } from '@a2a-js/sdk';
import { setConfig } from '@talon/testing';
import { json, spawnAgent, startEnv, stopEnv, type Env, type TaskView } from './helpers.ts';
import { withBearer } from '../services/remote.ts';

/** An A2A agent built with the SDK's own Express server: it echoes what it gets as a message. */
async function startSdkAgent(): Promise<{ url: string; server: Server }> {
  const app = express();
  let base = '';
  const card = (): AgentCard => ({
    name: 'SDK echo agent',
    description: 'echoes',
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'echoes', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  });
  const executor: AgentExecutor = {
    async execute(ctx, bus) {
      const part = ctx.userMessage.parts[0]?.content;
      const text = part?.$case === 'text' ? part.value : '';
      bus.publish(
        AgentEvent.message({
          messageId: crypto.randomUUID(),
          contextId: ctx.contextId,
          taskId: '',
          role: Role.ROLE_AGENT,
          parts: [{ content: { $case: 'text', value: `sdk echo: ${text}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }),
      );
      bus.finished();
    },
    async cancelTask() {},
  };
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card() }));
  app.use('/rpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, server };
}

const B_KEY = 'instance-b-api-key-0123456789';
const asB = { authorization: `Bearer ${B_KEY}` };

describe('A2A client', () => {
  let a: Env;
  let b: Env;
  let sdk: { url: string; server: Server };
  before(async () => {
    sdk = await startSdkAgent();
    b = await startEnv(`api_key = "${B_KEY}"\n[a2a]\nname = "Instance B"`);
    await spawnAgent(b.k, 'responder', '[]', asB);
    a = await startEnv('[a2a]\nallowed_hosts = ["127.0.0.1"]', ['tools']);
  });
  after(async () => {
    await stopEnv(a);
    await stopEnv(b);
    await new Promise((resolve) => sdk.server.close(resolve));
  });

  const discover = (url: string) => a.k.request('/api/a2a/discover', { method: 'POST', json: { url } });

  it('refuses loopback and private targets that are not allow-listed, and bad URLs', async () => {
    for (const url of ['http://127.0.0.2:9/', 'http://localhost:9/', 'http://10.0.0.1/', 'http://[::1]:9/']) {
      const res = await discover(url);
      assert.equal(res.status, 403, url);
      assert.match((await json<{ error: string }>(res)).error, /SSRF|not public/, url);
    }
    for (const url of ['not a url', 'ftp://example.com/', 'http://user:pw@127.0.0.1/']) assert.equal((await discover(url)).status, 400, url);
    assert.equal((await a.k.request('/api/a2a/discover', { method: 'POST', json: {} })).status, 400);
    const closed = await discover('http://127.0.0.1:9/');
    assert.equal(closed.status, 502);
  });

  it('talks to an A2A SDK server: discover (agent-card.json), send, reply', async () => {
    const res = await discover(sdk.url);
    assert.equal(res.status, 200);
    const { agent } = await json<{ agent: { id: string; name: string; url: string; skills: Array<{ id: string }> } }>(res);
    assert.equal(agent.name, 'SDK echo agent');
    assert.deepEqual(
      agent.skills.map((s) => s.id),
      ['echo'],
    );
    const sent = await a.k.request('/api/a2a/send', { method: 'POST', json: { agent_id: agent.id, message: 'ping' } });
    assert.equal(sent.status, 200);
    const task = await json<TaskView>(sent);
    assert.equal(task.status, 'completed');
    assert.equal(task.result?.parts[0].text, 'sdk echo: ping');
    assert.equal((await json<TaskView>(await a.k.request(`/api/a2a/tasks/${task.task_id}/status`))).status, 'completed');
  });

  it('two instances: discover, send, reply; the task is followed on both sides', async () => {
    // B has an api_key: its card needs it too, unless B publishes the card; its tasks always need it.
    const closed = await discover(b.k.url);
    assert.equal(closed.status, 502);
    assert.match((await json<{ error: string }>(closed)).error, /HTTP 401: the card needs a key; give it as token/);
    await setConfig(b.k, 'a2a.public_card', true);
    const bare = await json<{ agent: { id: string; has_token: boolean } }>(await discover(b.k.url));
    assert.equal(bare.agent.has_token, false);
    const refused = await a.k.request('/api/a2a/send', { method: 'POST', json: { agent_id: bare.agent.id, message: 'no key' } });
    assert.equal(refused.status, 502);
    assert.match((await json<{ error: string }>(refused)).error, /401|nauthori/);
    await setConfig(b.k, 'a2a.public_card', false);
    const res = await a.k.request('/api/a2a/discover', { method: 'POST', json: { url: b.k.url, token: B_KEY } });
    assert.equal(res.status, 200);
    const { agent } = await json<{ agent: { id: string; name: string; has_token: boolean } }>(res);
    assert.equal(agent.name, 'Instance B');
    assert.equal(agent.id, bare.agent.id, 'discovering again updates the agent');
    assert.equal(agent.has_token, true);
    // Discovering again without a token keeps the stored one, and it still opens the card.
    const again = await json<{ agent: { id: string; has_token: boolean } }>(await discover(b.k.url));
    assert.deepEqual(again.agent.id, agent.id);
    assert.equal(again.agent.has_token, true);
    const listed = JSON.stringify(await json(await a.k.request('/api/a2a/agents')));
    assert.ok(!listed.includes(B_KEY), 'the token was read back');
    const stored = (await a.k.kernel.store.one<{ token: string }>('SELECT token FROM a2a_remote_agents WHERE id = ?', [agent.id]))!;
    assert.ok(stored.token && !stored.token.includes(B_KEY), 'the token is stored in clear');
    const list = await json<{ agents: Array<{ id: string }>; total: number }>(await a.k.request('/api/a2a/agents'));
    assert.equal(list.total, 2);
    assert.equal((await json<{ name: string }>(await a.k.request(`/api/a2a/agents/${agent.id}`))).name, 'Instance B');
    b.fake.enqueue({ text: 'B says hello back' });
    const sent = await a.k.request('/api/a2a/tasks/send', {
      method: 'POST',
      json: { agent_id: 'Instance B', message: { role: 'user', parts: [{ text: 'hello B' }] } },
    });
    assert.equal(sent.status, 200, await sent.clone().text());
    const task = await json<TaskView>(sent);
    assert.equal(task.status, 'completed');
    assert.deepEqual(task.result, { role: 'agent', parts: [{ text: 'B says hello back' }] });
    assert.match(JSON.stringify(b.fake.requests.at(-1)!.body.messages), /hello B/);
    const remoteView = await json<TaskView>(await b.k.request(`/a2a/tasks/${task.remote_task_id}`, { headers: asB }));
    assert.equal(remoteView.status, 'completed');
    const local = await json<TaskView>(await a.k.request(`/api/a2a/tasks/${task.task_id}`));
    assert.equal(local.agent_id, agent.id);
    assert.equal((await json<TaskView>(await a.k.request(`/api/a2a/tasks/${task.remote_task_id}/status`))).status, 'completed');
  });

  it('an agent messages an external agent with the a2a_send tool', async () => {
    const id = await spawnAgent(a.k, 'caller', '["a2a_send"]');
    b.fake.enqueue({ text: 'B answers the tool' });
    a.fake.enqueue({ toolCalls: [{ name: 'a2a_send', input: { agent: 'Instance B', message: 'from a tool' } }] }, { text: 'done' });
    const before = a.fake.requests.length;
    const res = await a.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'ask B' } });
    assert.equal(res.status, 200);
    const [first, second] = a.fake.requests.slice(before);
    assert.match(JSON.stringify(first.body.tools), /Instance B/);
    assert.match(JSON.stringify(second.body.messages), /B answers the tool/);
  });

  it('the token goes only to the origin the agent was discovered at, not to another host its card names', async () => {
    const seen: Array<[string, string | null]> = [];
    const record: typeof fetch = async (input, init) => {
      seen.push([String(input), new Headers(init?.headers).get('authorization')]);
      return new Response('{}');
    };
    const guarded = withBearer(record, 'http://127.0.0.1:4545', 'secret-token');
    await guarded('http://127.0.0.1:4545/a2a', { method: 'POST', headers: { 'content-type': 'application/json' } });
    await guarded('http://evil.example/a2a', { method: 'POST' });
    assert.deepEqual(seen, [
      ['http://127.0.0.1:4545/a2a', 'Bearer secret-token'],
      ['http://evil.example/a2a', null],
    ]);
  });

  it('errors of the client endpoints', async () => {
    const cases: Array<[string, unknown, number]> = [
      ['/api/a2a/send', {}, 400],
      ['/api/a2a/send', { agent_id: 'nobody', message: 'x' }, 404],
      ['/api/a2a/send', { agent_id: 'Instance B', message: '' }, 400],
      ['/api/a2a/tasks/send', { agent_id: 'Instance B', message: { parts: [] } }, 400],
    ];
    for (const [path, body, status] of cases) {
      const res = await a.k.request(path, { method: 'POST', json: body });
      assert.equal(res.status, status, `${path} ${JSON.stringify(body)}`);
      assert.equal(typeof (await json(res)).error, 'string');
    }
    for (const path of ['/api/a2a/agents/nobody', '/api/a2a/tasks/nope', '/api/a2a/tasks/nope/status'])
      assert.equal((await a.k.request(path)).status, 404, path);
  });
});
