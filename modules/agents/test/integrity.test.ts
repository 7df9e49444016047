import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEnv, stopEnv, spawn, manifest, type Env } from './helpers.ts';

describe('agents: what a kill removes, what Stable mode pins', () => {
  let env: Env;
  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  test('killing an agent removes its uploads', async () => {
    const { agent_id } = await spawn(env.k, 'uploader');
    const form = new FormData();
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'note.txt');
    const up = await env.k.request(`/api/agents/${agent_id}/upload`, { method: 'POST', body: form });
    assert.equal(up.status, 201);
    const { file_id } = (await up.json()) as { file_id: string };
    assert.equal((await env.k.request(`/api/uploads/${file_id}`)).status, 200);
    assert.equal((await env.k.request(`/api/agents/${agent_id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await env.k.request(`/api/uploads/${file_id}`)).status, 404);
  });

  test('in Stable mode a manifest replacement cannot change the model; Normal allows it', async () => {
    const { agent_id } = await spawn(env.k, 'pinned');
    assert.equal((await env.k.request(`/api/agents/${agent_id}/mode`, { method: 'PUT', json: { mode: 'Stable' } })).status, 200);
    const other = manifest('pinned').replace('model = "default"', 'model = "gpt-4o"');
    const refused = await env.k.request(`/api/agents/${agent_id}`, { method: 'PATCH', json: { manifest_toml: other } });
    assert.equal(refused.status, 409);
    assert.match(((await refused.json()) as { error: string }).error, /Stable/);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/mode`, { method: 'PUT', json: { mode: 'Normal' } })).status, 200);
    const allowed = await env.k.request(`/api/agents/${agent_id}`, { method: 'PATCH', json: { manifest_toml: other } });
    assert.equal(allowed.status, 200);
  });
});
