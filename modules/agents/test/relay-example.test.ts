/**
 * The example of docs/agents.md, "Using agents from a module": the relay fixture module, run for real (agent registry,
 * runner with its events, the messageReceived hook, the turn events on the bus), and the docs quote it verbatim.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { FIXTURE_MODULES, startEnv, stopEnv, type Env } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const json = async <T>(res: Response) => (await res.json()) as T;
interface Stats {
  finished: Record<string, number>;
  last_turn: Record<string, { origin: string; fromLocalUser: boolean }>;
}

describe('the relay example module', () => {
  let env: Env;
  let agentId: string;
  before(async () => {
    env = await startEnv({ echo: true, modules: ['relay'] });
    const manifest = 'name = "greeter"\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ["echo"]\n';
    const res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
    assert.equal(res.status, 201, await res.clone().text());
    agentId = (await json<{ agent_id: string }>(res)).agent_id;
  });
  after(() => stopEnv(env));

  const stats = async () => json<Stats>(await env.k.request('/api/relay/stats'));

  test('relays a message to an agent by name: the reply, the tools it used, its tokens; the turn is untrusted (origin relay)', async () => {
    env.fake.enqueue(
      { toolCalls: [{ name: 'echo', input: { text: 'ping' } }], usage: { input: 10, output: 2 } },
      { text: 'pong', usage: { input: 12, output: 3 } },
    );
    const res = await env.k.request('/api/relay/greeter', { method: 'POST', json: { text: 'say ping' } });
    assert.equal(res.status, 200);
    assert.deepEqual(await json(res), { reply: 'pong', tools: ['echo'], tokens: 27 });
    await waitFor(async () => (await stats()).finished[agentId] === 1, 5000, 'turn.completed counted');
    assert.deepEqual((await stats()).last_turn[agentId], { origin: 'relay', fromLocalUser: false });
  });

  test("the local user's own message through the API is the trusted kind; both turns are counted", async () => {
    env.fake.enqueue({ text: 'hello' });
    assert.equal((await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'hi' } })).status, 200);
    await waitFor(async () => (await stats()).finished[agentId] === 2, 5000, 'second turn counted');
    assert.deepEqual((await stats()).last_turn[agentId], { origin: 'http', fromLocalUser: true });
  });

  test('refusals: 404 for an unknown agent, 400 for an empty text', async () => {
    assert.equal((await env.k.request('/api/relay/nobody', { method: 'POST', json: { text: 'x' } })).status, 404);
    assert.equal((await env.k.request(`/api/relay/${agentId}`, { method: 'POST', json: { text: '' } })).status, 400);
  });

  test('a killed agent is forgotten by the example (agent.terminated)', async () => {
    assert.equal((await env.k.request(`/api/agents/${agentId}`, { method: 'DELETE' })).status, 200);
    await waitFor(async () => (await stats()).finished[agentId] === undefined, 5000, 'forgotten');
  });
});

test('docs/agents.md quotes the example module exactly', () => {
  const docs = readFileSync(path.join(root, 'docs/agents.md'), 'utf8');
  for (const file of ['index.ts', 'module.toml']) {
    const source = readFileSync(path.join(FIXTURE_MODULES, 'relay-module', file), 'utf8');
    assert.ok(docs.includes(source.trimEnd()), `docs/agents.md does not quote relay-module/${file} as it is`);
  }
});
