import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { json, parseSse, spawn, startEnv, stopEnv, waitFor, type Env } from './helpers.ts';

type SessionView = {
  session_id: string;
  agent_id: string;
  message_count: number;
  context_window_tokens: number;
  label: string | null;
  summary: string | null;
  messages: Array<{ role: string; content: string }>;
};
type Page = { items: Array<{ session_id: string; label: string | null; message_count: number; current?: boolean }>; total: number };
type Sent = { messages: Array<{ role: string; content: unknown }> };

describe('agents: sessions', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ config: '[agents.compaction]\nkeep_recent = 2' });
  });
  after(() => stopEnv(env));

  const send = (id: string, message: string, sessionId?: string) =>
    env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message, ...(sessionId && { session_id: sessionId }) } });
  /** Streams following the agent's turns (attach subscribes once its answer has begun). */
  const listeners = (id: string) => (env.k.kernel.services.view('agents.runner') as { listenerCount(id: string): number }).listenerCount(id);

  test('session shape; create, list, switch, by-label, label, search', async () => {
    const { agent_id } = await spawn(env.k, 'sess');
    const current = await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/session`));
    assert.equal(current.agent_id, agent_id);
    assert.equal(current.message_count, 0);
    assert.equal(current.context_window_tokens, 0);
    assert.deepEqual(current.messages, []);
    const created = await env.k.request(`/api/agents/${agent_id}/sessions`, { method: 'POST', json: { label: 'support' } });
    assert.equal(created.status, 201);
    const { session_id } = await json<{ session_id: string }>(created);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions`, { method: 'POST', json: { label: 'support' } })).status, 409);
    const list = await json<Page>(await env.k.request(`/api/agents/${agent_id}/sessions`));
    assert.equal(list.total, 2);
    assert.equal(list.items.find((i) => i.current)!.session_id, current.session_id);
    const byLabel = await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/sessions/by-label/support`));
    assert.equal(byLabel.session_id, session_id);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions/by-label/nothing`)).status, 404);
    const sw = await env.k.request(`/api/agents/${agent_id}/sessions/${session_id}/switch`, { method: 'POST' });
    assert.deepEqual(await sw.json(), { status: 'switched', agent_id, session_id });
    assert.equal((await json<{ session_id: string }>(await env.k.request(`/api/agents/${agent_id}`))).session_id, session_id);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions/nope/switch`, { method: 'POST' })).status, 400);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions/00000000-0000-4000-8000-000000000000/switch`, { method: 'POST' })).status, 404);
    const label = await env.k.request(`/api/sessions/${current.session_id}/label`, { method: 'PUT', json: { label: 'first' } });
    assert.deepEqual(await label.json(), { status: 'updated', session_id: current.session_id, label: 'first' });
    env.fake.enqueue({ text: 'noted' });
    await send(agent_id, 'the zebra-password is mentioned here');
    const found = await json<Page>(await env.k.request('/api/sessions/search?q=zebra-password'));
    assert.deepEqual(
      found.items.map((i) => i.session_id),
      [session_id],
    );
    assert.equal((await env.k.request('/api/sessions/search')).status, 400);
    const all = await json<Page>(await env.k.request('/api/sessions'));
    assert.ok(all.total >= 2);
    const detail = await json<SessionView>(await env.k.request(`/api/sessions/${session_id}`));
    assert.equal(detail.message_count, 2);
    assert.equal((await env.k.request('/api/sessions/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await env.k.request('/api/sessions/bad')).status, 400);
  });

  test('a message with session_id goes to that session without a switch; a foreign session → 400', async () => {
    const a = await spawn(env.k, 'multi');
    const b = await spawn(env.k, 'other');
    const other = await json<{ session_id: string }>(await env.k.request(`/api/agents/${a.agent_id}/sessions`, { method: 'POST' }));
    env.fake.enqueue({ text: 'in other' });
    const reply = await json<{ session_id: string }>(await send(a.agent_id, 'hello', other.session_id));
    assert.equal(reply.session_id, other.session_id);
    const current = await json<SessionView>(await env.k.request(`/api/agents/${a.agent_id}/session`));
    assert.equal(current.message_count, 0);
    const bSession = (await json<SessionView>(await env.k.request(`/api/agents/${b.agent_id}/session`))).session_id;
    const res = await send(a.agent_id, 'hello', bSession);
    assert.equal(res.status, 400);
  });

  test('turns in different sessions run in parallel; two turns in one session queue', async () => {
    const { agent_id } = await spawn(env.k, 'parallel');
    const s2 = (await json<{ session_id: string }>(await env.k.request(`/api/agents/${agent_id}/sessions`, { method: 'POST' }))).session_id;
    env.fake.enqueue({ text: 'A', delayMs: 500 }, { text: 'B', delayMs: 500 });
    let t0 = Date.now();
    await Promise.all([send(agent_id, 'a'), send(agent_id, 'b', s2)]);
    const parallel = Date.now() - t0;
    assert.ok(parallel < 950, `parallel sessions took ${parallel} ms`);

    env.fake.enqueue({ text: 'first', delayMs: 300 }, { text: 'second', delayMs: 300 });
    const before = env.fake.requests.length;
    t0 = Date.now();
    const [r1, r2] = await Promise.all([send(agent_id, 'q1'), (async () => (await waitFor(() => env.fake.requests.length > before), send(agent_id, 'q2')))()]);
    assert.ok(Date.now() - t0 >= 600, 'queued, not concurrent');
    assert.equal((await json(r1)).response, 'first');
    assert.equal((await json(r2)).response, 'second');
    const secondCall = env.fake.requests[before + 1].body as Sent;
    const texts = secondCall.messages.map((m) => JSON.stringify(m.content));
    const i1 = texts.findIndex((t) => t.includes('q1'));
    assert.ok(i1 >= 0 && texts[i1 + 1].includes('first') && texts[i1 + 2].includes('q2'), 'the second turn saw the whole first exchange');
  });

  test('history delete keeps the session; reset makes a new one; compact keeps summary + recent', async () => {
    const { agent_id } = await spawn(env.k, 'history');
    const original = (await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/session`))).session_id;
    for (const m of ['one', 'two', 'three']) {
      env.fake.enqueue({ text: `re ${m}` });
      await send(agent_id, m);
    }
    env.fake.enqueue({ text: 'SUMMARY: user counted to three' });
    const compact = await env.k.request(`/api/agents/${agent_id}/session/compact`, { method: 'POST' });
    assert.equal(compact.status, 200);
    const c = await json<{ status: string; message: string }>(compact);
    assert.equal(c.status, 'compacted');
    assert.match(c.message, /Compacted 4 messages/);
    const after = await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/session`));
    assert.equal(after.summary, 'SUMMARY: user counted to three');
    assert.deepEqual(
      after.messages.map((m) => m.content),
      ['three', 're three'],
    );
    env.fake.enqueue({ text: 'ok' });
    const before = env.fake.requests.length;
    await send(agent_id, 'four');
    assert.match(JSON.stringify((env.fake.requests[before].body as Sent).messages[1]), /SUMMARY: user counted to three/);

    const del = await env.k.request(`/api/agents/${agent_id}/history`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    const cleared = await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/session`));
    assert.equal(cleared.session_id, original);
    assert.equal(cleared.message_count, 0);
    assert.equal(cleared.summary, null);

    const reset = await json<{ status: string; agent_id: string; new_session_id: string }>(
      await env.k.request(`/api/agents/${agent_id}/session/reset`, { method: 'POST' }),
    );
    assert.equal(reset.status, 'reset');
    assert.equal(reset.agent_id, agent_id);
    assert.notEqual(reset.new_session_id, original);
    assert.equal((await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/session`))).session_id, reset.new_session_id);
  });

  test('delete a session; cleanup removes sessions of killed agents', async () => {
    const { agent_id } = await spawn(env.k, 'ephemeral');
    const extra = (await json<{ session_id: string }>(await env.k.request(`/api/agents/${agent_id}/sessions`, { method: 'POST' }))).session_id;
    assert.deepEqual(await (await env.k.request(`/api/sessions/${extra}`, { method: 'DELETE' })).json(), { status: 'deleted', session_id: extra });
    assert.equal((await env.k.request(`/api/sessions/${extra}`)).status, 404);
    await env.k.request(`/api/agents/${agent_id}`, { method: 'DELETE' });
    const cleanup = await json<{ removed: number }>(await env.k.request('/api/sessions/cleanup', { method: 'POST' }));
    assert.ok(cleanup.removed >= 1);
    const left = await json<Page & { items: Array<{ agent_id: string }> }>(await env.k.request(`/api/sessions?agent_id=${agent_id}`));
    assert.equal(left.total, 0);
  });

  test('attach: waits for the next turn, any number of subscribers, closes when the turn ends', async () => {
    const { agent_id } = await spawn(env.k, 'watched');
    const a1 = env.k.request(`/api/agents/${agent_id}/attach`);
    const a2 = env.k.request(`/api/agents/${agent_id}/attach`);
    const [r1, r2] = await Promise.all([a1, a2]);
    assert.equal(r1.status, 200);
    assert.match(r1.headers.get('content-type')!, /text\/event-stream/);
    const bodies = Promise.all([r1.text(), r2.text()]);
    await waitFor(() => listeners(agent_id) === 2);
    env.fake.enqueue({ text: 'observed reply' });
    const reply = await json(await send(agent_id, 'hello'));
    assert.equal(reply.response, 'observed reply');
    for (const body of await bodies) {
      const events = parseSse(body);
      assert.equal(
        events
          .filter((e) => e.event === 'chunk')
          .map((e) => e.data.content)
          .join(''),
        'observed reply',
      );
      assert.equal(events.at(-1)!.event, 'done');
    }
    assert.equal((await env.k.request('/api/agents/00000000-0000-4000-8000-000000000000/attach')).status, 404);
    // A subscriber that goes away unsubscribes.
    const runner = env.k.kernel.services.view('agents.runner') as { listenerCount(id: string): number };
    assert.equal(runner.listenerCount(agent_id), 0);
    const controller = new AbortController();
    await env.k.request(`/api/agents/${agent_id}/attach`, { signal: controller.signal });
    assert.equal(runner.listenerCount(agent_id), 1);
    controller.abort();
    await waitFor(() => runner.listenerCount(agent_id) === 0);
  });

  test('per-session attach (the reference variant) only follows turns of its session', async () => {
    const { agent_id } = await spawn(env.k, 'watched-session');
    const other = (await json<{ session_id: string }>(await env.k.request(`/api/agents/${agent_id}/sessions`, { method: 'POST' }))).session_id;
    const res = await env.k.request(`/api/agents/${agent_id}/sessions/${other}/stream`);
    assert.equal(res.status, 200);
    const body = res.text();
    await waitFor(() => listeners(agent_id) === 1);
    env.fake.enqueue({ text: 'in the current session' }, { text: 'in the other session' });
    await send(agent_id, 'first');
    await send(agent_id, 'second', other);
    const events = parseSse(await body);
    assert.equal(
      events
        .filter((e) => e.event === 'chunk')
        .map((e) => e.data.content)
        .join(''),
      'in the other session',
    );
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions/00000000-0000-4000-8000-000000000000/stream`)).status, 404);
  });

  test('a streaming client that disconnects neither kills the turn nor leaks listeners', async () => {
    const { agent_id } = await spawn(env.k, 'leaver');
    env.fake.enqueue({ text: 'a long answer that nobody reads', delayMs: 300 });
    const controller = new AbortController();
    const res = await env.k.request(`/api/agents/${agent_id}/message/stream`, { method: 'POST', json: { message: 'hi' }, signal: controller.signal });
    assert.equal(res.status, 200);
    controller.abort();
    await waitFor(async () => (await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/session`))).message_count === 2);
    const session = await json<SessionView>(await env.k.request(`/api/agents/${agent_id}/session`));
    assert.equal(session.messages[1].content, 'a long answer that nobody reads');
  });
});
