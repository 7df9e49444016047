/**
 * Chat features on the server: branches (edit a sent message, regenerate a reply), session titles, and a stopped
 * reply (kept with its partial text, metered, and a turn of its own for the model).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { json, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type Sent = { messages: Array<{ role: string; content: unknown }> };
type Message = { role: string; content: string; stopped?: boolean };
type Session = { session_id: string; title: string | null; parent_id: string | null; forked_at: number | null; messages: Message[] };
type Listed = { items: Array<{ session_id: string; title: string | null; parent_id: string | null; current: boolean }> };

/** What the provider got, as [role, text] pairs (OpenAI wire: content is a string or text parts). */
function conversation(body: Record<string, unknown>): Array<[string, string]> {
  return (body as Sent).messages
    .filter((m) => m.role !== 'system')
    .map((m) => [m.role, typeof m.content === 'string' ? m.content : (m.content as Array<{ text?: string }>).map((p) => p.text ?? '').join('')]);
}

describe('agents: branches, titles and stopped replies', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ modules: ['usage'] });
  });
  after(() => stopEnv(env));

  const send = (id: string, message: string, sessionId?: string) =>
    env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message, ...(sessionId && { session_id: sessionId }) } });
  const session = async (id: string) => json<Session>(await env.k.request(`/api/agents/${id}/session`));
  const branch = (sessionId: string, body: Record<string, unknown>) => env.k.request(`/api/sessions/${sessionId}/branches`, { method: 'POST', json: body });

  test('edit a sent message: a branch holds the messages before it, becomes current, and the turn re-runs from there; the parent stays', async () => {
    const { agent_id } = await spawn(env.k, 'brancher');
    env.fake.enqueue({ text: 'Paris.' }, { text: 'Berlin.' });
    await send(agent_id, 'Capital of France?');
    await send(agent_id, 'Capital of Germany?');
    const parent = await session(agent_id);
    assert.equal(parent.messages.length, 4);

    const res = await branch(parent.session_id, { at: 2 });
    assert.equal(res.status, 201);
    const made = await json<{ session_id: string; parent_id: string; forked_at: number; current: boolean }>(res);
    assert.deepEqual({ parent: made.parent_id, at: made.forked_at, current: made.current }, { parent: parent.session_id, at: 2, current: true });

    const child = await session(agent_id);
    assert.equal(child.session_id, made.session_id, 'the branch is the current session');
    assert.deepEqual(
      child.messages.map((m) => m.content),
      ['Capital of France?', 'Paris.'],
    );
    assert.deepEqual({ parent: child.parent_id, at: child.forked_at }, { parent: parent.session_id, at: 2 });

    env.fake.enqueue({ text: 'Rome.' });
    const before = env.fake.requests.length;
    await send(agent_id, 'Capital of Italy?');
    assert.deepEqual(conversation(env.fake.requests[before].body), [
      ['user', 'Capital of France?'],
      ['assistant', 'Paris.'],
      ['user', 'Capital of Italy?'],
    ]);
    const kept = await json<Session>(await env.k.request(`/api/sessions/${parent.session_id}`));
    assert.deepEqual(
      kept.messages.map((m) => m.content),
      ['Capital of France?', 'Paris.', 'Capital of Germany?', 'Berlin.'],
      'the old branch is kept',
    );
    const list = await json<Listed>(await env.k.request(`/api/agents/${agent_id}/sessions`));
    assert.equal(list.items.find((i) => i.session_id === made.session_id)?.parent_id, parent.session_id);
  });

  test('regenerate the last reply: a branch at the last message a person sent, which is sent again', async () => {
    const { agent_id } = await spawn(env.k, 'regenerator');
    env.fake.enqueue({ text: 'First try.' });
    await send(agent_id, 'Tell me a joke');
    const parent = await session(agent_id);
    const res = await branch(parent.session_id, { at: 0 });
    assert.equal(res.status, 201);
    env.fake.enqueue({ text: 'Second try.' });
    const before = env.fake.requests.length;
    const reply = await json<{ response: string; session_id: string }>(await send(agent_id, 'Tell me a joke'));
    assert.equal(reply.response, 'Second try.');
    assert.deepEqual(conversation(env.fake.requests[before].body), [['user', 'Tell me a joke']], 'the old reply is not in the request');
    assert.equal((await json<Session>(await env.k.request(`/api/sessions/${parent.session_id}`))).messages[1].content, 'First try.');
  });

  test('a branch starts at a message a person sent or at the end; anything else is a 400 naming it; switch: false leaves the current session', async () => {
    const { agent_id } = await spawn(env.k, 'branch-errors');
    env.fake.enqueue({ text: 'hi' });
    await send(agent_id, 'hello');
    const { session_id } = await session(agent_id);
    const past = await branch(session_id, { at: 3 });
    assert.equal(past.status, 400);
    assert.match((await json<{ error: string }>(past)).error, /past the end of the session \(2 messages\)/);
    const reply = await branch(session_id, { at: 1 });
    assert.equal(reply.status, 400);
    assert.match((await json<{ error: string }>(reply)).error, /message 1 is not a message a person sent/);
    assert.equal((await branch(session_id, { at: -1 })).status, 400);
    assert.equal((await branch(session_id, {})).status, 400);
    assert.equal((await branch('00000000-0000-4000-8000-000000000009', { at: 0 })).status, 404);
    const copy = await json<{ session_id: string; current: boolean }>(await branch(session_id, { at: 2, switch: false }));
    assert.equal(copy.current, false);
    assert.equal((await session(agent_id)).session_id, session_id);
    assert.equal((await json<Session>(await env.k.request(`/api/sessions/${copy.session_id}`))).messages.length, 2);
  });

  test('titles: the first line of the first message by default, the label once renamed', async () => {
    const { agent_id } = await spawn(env.k, 'titled');
    const empty = await session(agent_id);
    assert.equal(empty.title, null);
    env.fake.enqueue({ text: 'ok' });
    await send(agent_id, '  Plan the trip to Lisbon\nwith a budget of 800 EUR');
    assert.equal((await session(agent_id)).title, 'Plan the trip to Lisbon');
    const listed = await json<Listed>(await env.k.request(`/api/sessions?agent_id=${agent_id}`));
    assert.equal(listed.items[0].title, 'Plan the trip to Lisbon');
    await env.k.request(`/api/sessions/${empty.session_id}/label`, { method: 'PUT', json: { label: 'Lisbon' } });
    assert.equal((await session(agent_id)).title, 'Lisbon');
  });

  test('export: Markdown with who spoke and the title, or the JSON session, as an attachment; a bad format is a 400', async () => {
    const { agent_id } = await spawn(env.k, 'exporter');
    env.fake.enqueue({ text: '| a | b |\n|---|---|\n| 1 | 2 |' });
    await send(agent_id, 'A table please');
    const { session_id } = await session(agent_id);
    const md = await env.k.request(`/api/sessions/${session_id}/export?format=md`);
    assert.equal(md.status, 200);
    assert.match(md.headers.get('content-type') ?? '', /^text\/markdown/);
    assert.equal(md.headers.get('content-disposition'), `attachment; filename="session-${session_id.slice(0, 8)}.md"`);
    const text = await md.text();
    assert.match(text, /^# A table please\n/);
    assert.match(text, /## You · .*\n\nA table please\n/);
    assert.match(text, /## Agent · .*\n\n\| a \| b \|/);
    const js = await env.k.request(`/api/sessions/${session_id}/export?format=json`);
    assert.equal(js.headers.get('content-disposition'), `attachment; filename="session-${session_id.slice(0, 8)}.json"`);
    assert.equal((await json<Session>(js)).messages.length, 2);
    assert.equal((await env.k.request(`/api/sessions/${session_id}/export?format=pdf`)).status, 400);
  });

  test('stop mid-stream: the partial reply is kept marked stopped, its tokens are counted and metered, and the next message is a turn of its own', async () => {
    const { agent_id } = await spawn(env.k, 'stopped-partial');
    env.fake.enqueue({ text: 'One two three four five six seven eight nine ten', chunkSize: 4, chunkDelayMs: 300 });
    const before = env.fake.requests.length;
    const pending = send(agent_id, 'Count to ten');
    await waitFor(() => env.fake.requests.length > before);
    // A few chunks (one every 300 ms) go out before the stop.
    await new Promise((r) => setTimeout(r, 500));
    await env.k.request(`/api/agents/${agent_id}/stop`, { method: 'POST' });
    const reply = await json<{ response: string; interrupted?: boolean; output_tokens: number; input_tokens: number }>(await pending);
    assert.equal(reply.interrupted, true);
    const partial = reply.response;
    assert.ok(partial.length > 0 && partial.length < 49, `a partial reply: '${partial}'`);
    assert.ok(reply.output_tokens > 0 && reply.input_tokens > 0, 'the partial reply is counted into the turn');

    const stored = (await session(agent_id)).messages;
    assert.deepEqual(stored[stored.length - 1], { ...stored[stored.length - 1], role: 'Assistant', content: partial, stopped: true });

    await waitFor(async () => {
      const usage = await json<{ total_output_tokens: number }>(await env.k.request('/api/usage?period=day'));
      return usage.total_output_tokens >= reply.output_tokens;
    });

    env.fake.enqueue({ text: 'Sure.' });
    const next = env.fake.requests.length;
    await send(agent_id, 'Never mind, say hi');
    assert.deepEqual(conversation(env.fake.requests[next].body), [
      ['user', 'Count to ten'],
      ['assistant', partial],
      ['user', 'Never mind, say hi'],
    ]);
  });

  test('stop before the provider answered: an empty reply marked stopped keeps the next message apart', async () => {
    const { agent_id } = await spawn(env.k, 'stopped-early');
    env.fake.enqueue({ text: 'too late', delayMs: 3000 });
    const before = env.fake.requests.length;
    const pending = send(agent_id, 'first question');
    await waitFor(() => env.fake.requests.length > before);
    await env.k.request(`/api/agents/${agent_id}/stop`, { method: 'POST' });
    assert.equal((await json<{ interrupted?: boolean }>(await pending)).interrupted, true);
    const last = (await session(agent_id)).messages.at(-1)!;
    assert.deepEqual([last.role, last.content, last.stopped], ['Assistant', '', true]);
    env.fake.enqueue({ text: 'ok' });
    const next = env.fake.requests.length;
    await send(agent_id, 'second question');
    assert.deepEqual(conversation(env.fake.requests[next].body), [
      ['user', 'first question'],
      ['assistant', '[stopped by the user before replying]'],
      ['user', 'second question'],
    ]);
  });
});

describe('agents: titles written by the model (a setting)', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ config: '[agents]\nsession_titles = "model"' });
  });
  after(() => stopEnv(env));

  test('after the first exchange the model names the session; later turns ask no more', async () => {
    const { agent_id } = await spawn(env.k, 'model-titled');
    env.fake.enqueue({ text: 'Lisbon has trams.' }, { text: '"Lisbon trip ideas."' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'What to see in Lisbon?' } });
    await waitFor(async () => (await json<Session>(await env.k.request(`/api/agents/${agent_id}/session`))).title === 'Lisbon trip ideas');
    assert.equal(env.fake.requests.length, before + 2);
    env.fake.enqueue({ text: 'Yes.' });
    await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'And Porto?' } });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(env.fake.requests.length, before + 3, 'one title call per session');
  });
});
