import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { json, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

describe('agents: spawn, list, detail, kill, settings', () => {
  let env: Env;
  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  test('spawn → 201 {agent_id, name}; list is a bare array of summaries; detail has the spec fields', async () => {
    const { agent_id, name } = await spawn(env.k, 'alpha');
    assert.equal(name, 'alpha');
    const list = await json<Array<Record<string, unknown>>>(await env.k.request('/api/agents'));
    assert.ok(Array.isArray(list));
    const item = list.find((a) => a.id === agent_id)!;
    assert.deepEqual(Object.keys(item).sort(), ['created_at', 'id', 'model_name', 'model_provider', 'name', 'state']);
    assert.equal(item.state, 'Running');
    assert.equal(item.model_provider, 'openai');
    assert.equal(item.model_name, 'fake-model');
    const detail = await json(await env.k.request(`/api/agents/${agent_id}`));
    assert.equal(detail.id, agent_id);
    assert.match(String(detail.session_id), /^[0-9a-f-]{36}$/);
    assert.deepEqual(detail.model, { provider: 'openai', model: 'fake-model' });
    assert.deepEqual((detail.capabilities as Record<string, unknown>).tools, ['*']);
    assert.deepEqual(detail.tags, ['test']);
    assert.equal(detail.description, 'test agent alpha');
  });

  test('list accepts q, limit and offset', async () => {
    await spawn(env.k, 'searchable-one');
    const found = await json<Array<{ name: string }>>(await env.k.request('/api/agents?q=searchable'));
    assert.deepEqual(
      found.map((a) => a.name),
      ['searchable-one'],
    );
    const limited = await json<unknown[]>(await env.k.request('/api/agents?limit=1&offset=0'));
    assert.equal(limited.length, 1);
  });

  test('the list carries an ETag: If-None-Match with it is a 304 without a body until an agent changes', async () => {
    const first = await env.k.request('/api/agents');
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[\w-]+"$/);
    await first.arrayBuffer();
    const again = await env.k.request('/api/agents', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal((await env.k.request('/api/agents', { headers: { 'if-none-match': `"other", W/${etag}` } })).status, 304);
    await spawn(env.k, 'etag-changer');
    const changed = await env.k.request('/api/agents', { headers: { 'if-none-match': etag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), etag);
    assert.ok(((await changed.json()) as Array<{ name: string }>).some((a) => a.name === 'etag-changer'));
  });

  test('bad manifests → 400 naming the problem; duplicate name → 409', async () => {
    let res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "x"\n[model' } });
    assert.equal(res.status, 400);
    assert.match((await json(res)).error as string, /invalid manifest/i);
    res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'description = "no name"' } });
    assert.equal(res.status, 400);
    assert.match((await json(res)).error as string, /name/);
    res = await env.k.request('/api/agents', { method: 'POST', json: {} });
    assert.equal(res.status, 400);
    await spawn(env.k, 'dupe');
    res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "dupe"' } });
    assert.equal(res.status, 409);
  });

  test('GET/DELETE with a non-UUID → 400, unknown → 404; DELETE → killed', async () => {
    assert.equal((await env.k.request('/api/agents/not-a-uuid')).status, 400);
    assert.equal((await env.k.request('/api/agents/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await env.k.request('/api/agents/not-a-uuid', { method: 'DELETE' })).status, 400);
    assert.equal((await env.k.request('/api/agents/00000000-0000-4000-8000-000000000000', { method: 'DELETE' })).status, 404);
    const { agent_id } = await spawn(env.k, 'doomed');
    const res = await env.k.request(`/api/agents/${agent_id}`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'killed', agent_id });
    assert.equal((await env.k.request(`/api/agents/${agent_id}`)).status, 404);
  });

  test('blocking message goes through the loop and persists in the session', async () => {
    const { agent_id } = await spawn(env.k, 'talker');
    env.fake.enqueue({ text: 'Hello there!', usage: { input: 12, output: 3 } });
    const res = await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'Hi' } });
    assert.equal(res.status, 200);
    const reply = await json(res);
    assert.equal(reply.response, 'Hello there!');
    assert.equal(reply.input_tokens, 12);
    assert.equal(reply.output_tokens, 3);
    assert.equal(reply.iterations, 1);
    assert.equal(reply.owner_notice, undefined);
    const sent = env.fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    assert.equal(sent.messages[0].role, 'system');
    assert.match(JSON.stringify(sent.messages[0].content), /You are talker/);
    assert.equal(sent.messages.at(-1)!.role, 'user');
    const session = await json<{ message_count: number; messages: Array<{ role: string; content: string }> }>(
      await env.k.request(`/api/agents/${agent_id}/session`),
    );
    assert.equal(session.message_count, 2);
    assert.deepEqual(
      session.messages.map((m) => [m.role, m.content]),
      [
        ['User', 'Hi'],
        ['Assistant', 'Hello there!'],
      ],
    );
  });
});
