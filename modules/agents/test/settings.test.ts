import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HELLO_WORLD, json, spawn, startEnv, stopEnv, manifest, type Env } from './helpers.ts';

type Detail = Record<string, unknown> & {
  model: { provider: string; model: string };
  identity: Record<string, string>;
  config: Record<string, unknown>;
  skills: string[];
  state: string;
  mode: string;
};

describe('agents: settings, clone, bulk', () => {
  let env: Env;
  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));
  const detail = async (id: string) => json<Detail>(await env.k.request(`/api/agents/${id}`));

  test('the reference hello-world manifest spawns over HTTP once its tools are ones this kernel has', async () => {
    // This kernel has no tool module: the reference's tools are unknown here, and refused by name.
    const refused = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: HELLO_WORLD } });
    assert.equal(refused.status, 400);
    assert.match((await json<{ error: string }>(refused)).error, /unknown tool 'file_read'.*unknown tool 'web_search'/);
    const toolless = HELLO_WORLD.replace(/^tools = \[.*\]$/m, 'tools = []');
    const res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: toolless } });
    assert.equal(res.status, 201);
    const { agent_id } = await json<{ agent_id: string }>(res);
    const d = await detail(agent_id);
    assert.deepEqual(d.mcp_servers, ['memory', 'fetch']);
    assert.equal((d.capabilities as { max_llm_tokens_per_hour: number }).max_llm_tokens_per_hour, 100000);
  });

  test('PUT update, PATCH, identity, config', async () => {
    const { agent_id } = await spawn(env.k, 'settable');
    let res = await env.k.request(`/api/agents/${agent_id}/update`, {
      method: 'PUT',
      json: { description: 'new desc', system_prompt: 'Be brief.', tags: ['a', 'b'] },
    });
    assert.deepEqual(await res.json(), { status: 'updated', agent_id });
    let d = await detail(agent_id);
    assert.equal(d.description, 'new desc');
    assert.equal(d.system_prompt, 'Be brief.');
    assert.deepEqual(d.tags, ['a', 'b']);
    res = await env.k.request(`/api/agents/${agent_id}`, { method: 'PATCH', json: { name: 'renamed' } });
    assert.equal(res.status, 200);
    assert.equal((await json<Detail>(res)).name, 'renamed');
    res = await env.k.request(`/api/agents/${agent_id}`, { method: 'PATCH', json: { manifest_toml: manifest('renamed', 'network = ["*"]') } });
    assert.deepEqual(((await json<Detail>(res)).capabilities as { network: string[] }).network, ['*']);
    assert.equal((await env.k.request(`/api/agents/${agent_id}`, { method: 'PATCH', json: { manifest_toml: 'oops' } })).status, 400);
    res = await env.k.request(`/api/agents/${agent_id}/identity`, { method: 'PATCH', json: { avatar: '🦅', persona: 'calm' } });
    assert.deepEqual((await json<Detail>(res)).identity, { avatar: '🦅', persona: 'calm' });
    await env.k.request(`/api/agents/${agent_id}/config`, { method: 'PATCH', json: { a: 1, b: { c: true } } });
    res = await env.k.request(`/api/agents/${agent_id}/config`, { method: 'PATCH', json: { a: null } });
    assert.deepEqual((await json<Detail>(res)).config, { b: { c: true } });
    assert.deepEqual((await detail(agent_id)).config, { b: { c: true } });
  });

  test('mode: Stable pins the model and freezes skills; Normal restores; other modes → 400', async () => {
    const { agent_id } = await spawn(env.k, 'moded');
    let res = await env.k.request(`/api/agents/${agent_id}/mode`, { method: 'PUT', json: { mode: 'Stable' } });
    assert.deepEqual(await res.json(), { status: 'updated', mode: 'Stable', agent_id });
    assert.equal((await env.k.request(`/api/agents/${agent_id}/model`, { method: 'PUT', json: { model: 'other-model' } })).status, 409);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/skills`, { method: 'PUT', json: { skills: ['x'] } })).status, 409);
    assert.equal((await json<{ frozen: boolean }>(await env.k.request(`/api/agents/${agent_id}/skills`))).frozen, true);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/mode`, { method: 'PUT', json: { mode: 'observe' } })).status, 400);
    res = await env.k.request(`/api/agents/${agent_id}/mode`, { method: 'PUT', json: { mode: 'Normal' } });
    assert.equal(res.status, 200);
    res = await env.k.request(`/api/agents/${agent_id}/skills`, { method: 'PUT', json: { skills: ['x', 'x', 'y'] } });
    assert.deepEqual(await res.json(), { agent_id, skills: ['x', 'y'], frozen: false });
  });

  test('PUT model takes an id or an alias; the next call uses it', async () => {
    const { agent_id } = await spawn(env.k, 'switcher');
    let res = await env.k.request(`/api/agents/${agent_id}/model`, { method: 'PUT', json: { model: 'gpt-mini' } });
    assert.equal(res.status, 200);
    const body = await json<{ status: string; model: string }>(res);
    assert.equal(body.status, 'updated');
    assert.equal(body.model, 'gpt-4o-mini');
    env.fake.enqueue({ text: 'hi' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'x' } });
    assert.equal((env.fake.requests[before].body as { model: string }).model, 'gpt-4o-mini');
    res = await env.k.request(`/api/agents/${agent_id}/model`, { method: 'PUT', json: { model: 'no-such-model-xyz' } });
    assert.equal(res.status, 404);
    res = await env.k.request(`/api/agents/${agent_id}/model`, { method: 'PUT', json: {} });
    assert.equal(res.status, 400);
  });

  test('tools and mcp_servers: GET and PUT replace', async () => {
    const { agent_id } = await spawn(env.k, 'lists');
    assert.deepEqual(await (await env.k.request(`/api/agents/${agent_id}/tools`)).json(), { agent_id, tools: ['*'] });
    const res = await env.k.request(`/api/agents/${agent_id}/tools`, { method: 'PUT', json: { tools: ['file_read'] } });
    assert.deepEqual(await res.json(), { agent_id, tools: ['file_read'] });
    assert.deepEqual(((await detail(agent_id)).capabilities as { tools: string[] }).tools, ['file_read']);
    await env.k.request(`/api/agents/${agent_id}/mcp_servers`, { method: 'PUT', json: { mcp_servers: ['github'] } });
    assert.deepEqual(await (await env.k.request(`/api/agents/${agent_id}/mcp_servers`)).json(), { agent_id, mcp_servers: ['github'] });
    assert.equal((await env.k.request(`/api/agents/${agent_id}/tools`, { method: 'PUT', json: { tools: 'x' } })).status, 400);
  });

  test('clone: a new agent with a fresh session', async () => {
    const { agent_id } = await spawn(env.k, 'original');
    env.fake.enqueue({ text: 'hi' });
    await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'x' } });
    const res = await env.k.request(`/api/agents/${agent_id}/clone`, { method: 'POST' });
    assert.equal(res.status, 201);
    const clone = await json<{ agent_id: string; name: string; session_id: string }>(res);
    assert.notEqual(clone.agent_id, agent_id);
    assert.equal(clone.name, 'original-clone');
    const d = await detail(clone.agent_id);
    assert.equal(d.description, 'test agent original');
    const session = await json<{ message_count: number }>(await env.k.request(`/api/agents/${clone.agent_id}/session`));
    assert.equal(session.message_count, 0);
  });

  test('bulk create, stop (stopped agents refuse messages with 409), start, delete', async () => {
    let res = await env.k.request('/api/agents/bulk', {
      method: 'POST',
      json: { manifests: [manifest('bulk-1'), { manifest_toml: manifest('bulk-2') }, 'bad toml ['] },
    });
    assert.equal(res.status, 200);
    const created = await json<{ results: Array<{ status: string; agent_id?: string; error?: string }>; succeeded: number; failed: number }>(res);
    assert.equal(created.succeeded, 2);
    assert.equal(created.failed, 1);
    assert.match(created.results[2].error!, /invalid manifest/);
    const ids = created.results.slice(0, 2).map((r) => r.agent_id!);
    res = await env.k.request('/api/agents/bulk/stop', { method: 'POST', json: { ids } });
    assert.deepEqual(
      (await json<{ results: Array<{ state: string }> }>(res)).results.map((r) => r.state),
      ['Stopped', 'Stopped'],
    );
    assert.equal((await detail(ids[0])).state, 'Stopped');
    res = await env.k.request(`/api/agents/${ids[0]}/message`, { method: 'POST', json: { message: 'x' } });
    assert.equal(res.status, 409);
    res = await env.k.request('/api/agents/bulk/start', { method: 'POST', json: { ids: [ids[0]] } });
    assert.equal((await detail(ids[0])).state, 'Running');
    res = await env.k.request('/api/agents/bulk', { method: 'DELETE', json: { ids: [...ids, '00000000-0000-4000-8000-000000000000', 'bad'] } });
    const deleted = await json<{ results: Array<{ status: string }>; succeeded: number }>(res);
    assert.deepEqual(
      deleted.results.map((r) => r.status),
      ['killed', 'killed', 'not_found', 'error'],
    );
    assert.equal((await env.k.request(`/api/agents/${ids[0]}`)).status, 404);
    assert.equal((await env.k.request('/api/agents/bulk', { method: 'POST', json: {} })).status, 400);
    res = await env.k.request('/api/agents/bulk/start', { method: 'POST' });
    assert.equal(res.status, 200);
  });
});
