import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider } from '@talon/testing';
import { json, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

describe('agents: persistence across a restart', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-agents-persist-'));
  const fake = new FakeProvider();
  let env: Env | undefined;
  after(async () => {
    await stopEnv(env);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  });

  test('agents, settings, sessions and messages survive', async () => {
    await fake.start();
    env = await startEnv({ home, keepHome: true, fake });
    const { agent_id } = await spawn(env.k, 'durable');
    await env.k.request(`/api/agents/${agent_id}/update`, { method: 'PUT', json: { description: 'changed', tags: ['x'] } });
    await env.k.request(`/api/agents/${agent_id}/mode`, { method: 'PUT', json: { mode: 'Stable' } });
    const labelled = (await json<{ session_id: string }>(await env.k.request(`/api/agents/${agent_id}/sessions`, { method: 'POST', json: { label: 'kept' } })))
      .session_id;
    fake.enqueue({ text: 'remembered' });
    await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'remember me' } });
    const before = await json<Record<string, unknown>>(await env.k.request(`/api/agents/${agent_id}`));
    await env.k.stop();

    env = await startEnv({ home, keepHome: true, fake });
    const detail = await json<Record<string, unknown>>(await env.k.request(`/api/agents/${agent_id}`));
    assert.deepEqual(detail, before);
    assert.equal(detail.description, 'changed');
    assert.equal(detail.mode, 'Stable');
    const session = await json<{ messages: Array<{ content: string }> }>(await env.k.request(`/api/agents/${agent_id}/session`));
    assert.deepEqual(
      session.messages.map((m) => m.content),
      ['remember me', 'remembered'],
    );
    const byLabel = await json<{ session_id: string }>(await env.k.request(`/api/agents/${agent_id}/sessions/by-label/kept`));
    assert.equal(byLabel.session_id, labelled);
    const traces = await json<{ total: number }>(await env.k.request(`/api/agents/${agent_id}/traces`));
    assert.equal(traces.total, 1);
    fake.enqueue({ text: 'still here' });
    const reply = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'again' } }));
    assert.equal(reply.response, 'still here');
  });
});
