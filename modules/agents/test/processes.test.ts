/**
 * Two processes on one home (two kernels, one database): what one does to agents and sessions is seen by the other
 * within a second (the registry and the history caches follow the change feed).
 */
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider } from '@talon/testing';
import { json, spawn, startEnv, stopEnv, waitFor, type Env } from './helpers.ts';

type Detail = { name: string; system_prompt: string; session_id: string };
type Session = { messages: Array<{ role: string; content: string }> };

describe('agents: two processes on one home', () => {
  const fake = new FakeProvider();
  let a: Env;
  let b: Env;
  before(async () => {
    await fake.start();
    a = await startEnv({ fake, echo: true, keepHome: true, heartbeatMs: 100, feedPollMs: 50 });
    b = await startEnv({ fake, echo: true, home: a.k.home, heartbeatMs: 100, feedPollMs: 50 });
  });
  after(async () => {
    await stopEnv(b);
    await stopEnv(a);
    await fake.stop();
    if (a) rmSync(a.k.home, { recursive: true, force: true });
  });

  const status = async (env: Env, path: string) => (await env.k.request(path)).status;

  test('an agent spawned on one process is listed and answers on the other within a second', async () => {
    const { agent_id } = await spawn(a.k, 'made-on-a');
    await waitFor(async () => (await status(b, `/api/agents/${agent_id}`)) === 200, 1000);
    const listed = await json<Array<{ id: string }>>(await b.k.request('/api/agents'));
    assert.ok(listed.some((x) => x.id === agent_id));
    fake.enqueue({ text: 'hello from b' });
    const res = await b.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'hi' } });
    assert.equal(res.status, 200);
    assert.equal((await json<{ response: string }>(res)).response, 'hello from b');
  });

  test('a change on one process (PATCH, a session switch) reaches the other', async () => {
    const { agent_id } = await spawn(a.k, 'edited');
    await waitFor(async () => (await status(b, `/api/agents/${agent_id}`)) === 200, 1000);
    const patched = await a.k.request(`/api/agents/${agent_id}`, { method: 'PATCH', json: { name: 'renamed', system_prompt: 'Be brief.' } });
    assert.equal(patched.status, 200);
    await waitFor(async () => (await json<Detail>(await b.k.request(`/api/agents/${agent_id}`))).name === 'renamed', 1000);
    assert.equal((await json<Detail>(await b.k.request(`/api/agents/${agent_id}`))).system_prompt, 'Be brief.');
    // Names are unique across the processes: B refuses a name A just took, even before its registry heard of it.
    const clash = await b.k.request('/api/agents', {
      method: 'POST',
      json: { manifest_toml: 'name = "renamed"\n[model]\nprovider = "default"\nmodel = "default"\n' },
    });
    assert.equal(clash.status, 409);
    const reset = await json<{ new_session_id: string }>(await a.k.request(`/api/agents/${agent_id}/session/reset`, { method: 'POST' }));
    await waitFor(async () => (await json<Detail>(await b.k.request(`/api/agents/${agent_id}`))).session_id === reset.new_session_id, 1000);
  });

  test('changes of two processes to different fields of one agent are both kept (each reads the stored record)', async () => {
    const { agent_id } = await spawn(a.k, 'both-edit');
    await waitFor(async () => (await status(b, `/api/agents/${agent_id}`)) === 200, 1000);
    // B's write comes before B heard of A's: its record in memory still has the old description.
    const [first, second] = await Promise.all([
      a.k.request(`/api/agents/${agent_id}/update`, { method: 'PUT', json: { description: 'set on a' } }),
      b.k.request(`/api/agents/${agent_id}/mode`, { method: 'PUT', json: { mode: 'Stable' } }),
    ]);
    assert.deepEqual([first.status, second.status], [200, 200]);
    for (const env of [a, b]) {
      await waitFor(async () => {
        const d = await json<{ description: string; mode: string }>(await env.k.request(`/api/agents/${agent_id}`));
        return d.description === 'set on a' && d.mode === 'Stable';
      }, 1000);
    }
  });

  test("a turn on one process shows in the other's copy of the session history", async () => {
    const { agent_id } = await spawn(a.k, 'history');
    await waitFor(async () => (await status(b, `/api/agents/${agent_id}`)) === 200, 1000);
    // B reads the session first, so its history is in B's memory.
    assert.equal((await json<Session>(await b.k.request(`/api/agents/${agent_id}/session`))).messages.length, 0);
    fake.enqueue({ text: 'noted on a' });
    assert.equal((await a.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'remember me' } })).status, 200);
    const seen = await waitFor(async () => {
      const s = await json<Session>(await b.k.request(`/api/agents/${agent_id}/session`));
      return s.messages.length === 2 ? s : undefined;
    }, 1000);
    assert.deepEqual(
      seen!.messages.map((m) => m.content),
      ['remember me', 'noted on a'],
    );
    // And the next turn on B sends the whole exchange to the model.
    fake.enqueue({ text: 'still here' });
    const before = fake.requests.length;
    assert.equal((await b.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'and now?' } })).status, 200);
    const sent = JSON.stringify(fake.requests[before].body);
    assert.ok(sent.includes('remember me') && sent.includes('noted on a'), sent);
  });

  test('an agent stopped on one process (bulk stop) ends its turn on the other', async () => {
    const { agent_id } = await spawn(a.k, 'paused');
    await waitFor(async () => (await status(b, `/api/agents/${agent_id}`)) === 200, 1000);
    fake.enqueue({ text: 'too late', delayMs: 3000 });
    const before = fake.requests.length;
    const pending = b.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'long one' } });
    await waitFor(() => fake.requests.length > before, 2000);
    const started = Date.now();
    assert.equal((await a.k.request('/api/agents/bulk/stop', { method: 'POST', json: { ids: [agent_id] } })).status, 200);
    assert.equal((await json<{ interrupted?: boolean }>(await pending)).interrupted, true);
    assert.ok(Date.now() - started < 1000, 'stopped within a second');
  });

  test('an agent killed on one process is gone on the other, and its turn there stops', async () => {
    const { agent_id } = await spawn(a.k, 'doomed');
    await waitFor(async () => (await status(b, `/api/agents/${agent_id}`)) === 200, 1000);
    fake.enqueue({ text: 'too late', delayMs: 3000 });
    const before = fake.requests.length;
    const pending = b.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'long one' } });
    await waitFor(() => fake.requests.length > before, 2000);
    const started = Date.now();
    assert.equal((await a.k.request(`/api/agents/${agent_id}`, { method: 'DELETE' })).status, 200);
    const reply = await json<{ interrupted?: boolean }>(await pending);
    assert.equal(reply.interrupted, true);
    assert.ok(Date.now() - started < 1000, 'stopped within a second, not after the model answered');
    await waitFor(async () => (await status(b, `/api/agents/${agent_id}`)) === 404, 1000);
  });
});
