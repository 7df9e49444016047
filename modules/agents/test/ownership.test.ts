/**
 * Turn ownership across two processes on one home (two kernels, one database, one scripted provider): the turns of a
 * session run one after another in arrival order whichever process they reach; stop, interrupt and attach sent to the
 * process that does not run the turn are relayed to the one that does; when that process dies, its turn is recorded as
 * interrupted, its session is free again and a relayed attach ends saying so.
 */
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, type RecordedRequest } from '@talon/testing';
import { json, parseSse, spawn, startEnv, stopEnv, waitFor, type Env } from './helpers.ts';
import { OWNER_LOST } from '../services/relay.ts';

type Reply = { response: string; interrupted?: boolean; session_id: string };

describe('agents: turn ownership across processes', () => {
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

  const send = (env: Env, id: string, message: string) => env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message } });
  /** An agent spawned on A, once B's registry has it. */
  const shared = async (name: string) => {
    const { agent_id } = await spawn(a.k, name);
    await waitFor(async () => (await b.k.request(`/api/agents/${agent_id}`)).status === 200, 1000);
    return agent_id;
  };
  /** Resolves once the provider has received `count` more requests than `from`. */
  const requested = (from: number, count = 1) => waitFor(() => fake.requests.length >= from + count, 3000);
  const lastUserText = (r: RecordedRequest) => JSON.stringify((r.body.messages as unknown[]).at(-1));

  test("a session's turns sent to two processes run one after the other, each seeing the other's exchange", async () => {
    const id = await shared('one-session');
    fake.enqueue({ text: 'first answer', delayMs: 600 }, { text: 'second answer' });
    const from = fake.requests.length;
    const r1 = send(a, id, 'q1');
    await requested(from);
    const r2 = send(b, id, 'q2');
    const [x1, x2] = await Promise.all([r1.then((r) => json<Reply>(r)), r2.then((r) => json<Reply>(r))]);
    assert.deepEqual([x1.response, x2.response], ['first answer', 'second answer']);
    const [first, second] = fake.requests.slice(from, from + 2);
    assert.ok(second.startedAt! >= first.finishedAt!, 'the second model call began after the first answered');
    const sent = JSON.stringify(second.body);
    assert.ok(sent.includes('q1') && sent.includes('first answer'), 'B sent the exchange A had just written');
  });

  test('arrival order holds across processes: a turn waiting on the other process goes before a later one here', async () => {
    const id = await shared('fifo');
    fake.enqueue({ text: 'a1', delayMs: 1500 }, { text: 'b2' }, { text: 'a3' });
    const from = fake.requests.length;
    const r1 = send(a, id, 'turn-1');
    await requested(from);
    const r2 = send(b, id, 'turn-2');
    // B's turn is queued (its ticket written) before the third arrives on A, the process that holds the session.
    const queued = 'SELECT 1 AS n FROM agents_session_waits WHERE session_id IN (SELECT id FROM agents_sessions WHERE agent_id = ?) AND node = ?';
    await waitFor(async () => a.k.kernel.store.one(queued, [id, b.k.kernel.nodes.id]), 3000, "B's ticket");
    const r3 = send(a, id, 'turn-3');
    const replies = await Promise.all([r1, r2, r3].map((r) => r.then((x) => json<Reply>(x))));
    assert.deepEqual(
      replies.map((x) => x.response),
      ['a1', 'b2', 'a3'],
    );
    assert.deepEqual(
      fake.requests.slice(from, from + 3).map((r) => ['turn-1', 'turn-2', 'turn-3'].find((t) => lastUserText(r).includes(t))),
      ['turn-1', 'turn-2', 'turn-3'],
    );
  });

  test('stop sent to the process that does not run the turn stops it', async () => {
    const id = await shared('stop-me');
    fake.enqueue({ text: 'never sent', delayMs: 5000 });
    const from = fake.requests.length;
    const pending = send(a, id, 'long task');
    await requested(from);
    const started = Date.now();
    const stop = await json<{ message: string }>(await b.k.request(`/api/agents/${id}/stop`, { method: 'POST' }));
    assert.equal(stop.message, 'Run cancelled');
    const reply = await json<Reply>(await pending);
    assert.equal(reply.interrupted, true);
    assert.ok(Date.now() - started < 2000, 'stopped at once, not when the model answered');
    // Nothing runs any more: a second stop finds nothing, here or there.
    assert.equal((await json<{ message: string }>(await b.k.request(`/api/agents/${id}/stop`, { method: 'POST' }))).message, 'No active run');
  });

  test('interrupt sent to the process that does not run the turn ends it at its next boundary', async () => {
    const id = await shared('interrupt-me');
    const sid = (await json<{ session_id: string }>(await a.k.request(`/api/agents/${id}`))).session_id;
    fake.enqueue({ text: 'Let me check.', toolCalls: [{ name: 'echo', input: { text: 'x' } }], delayMs: 1500 });
    const from = fake.requests.length;
    const pending = send(a, id, 'go');
    await requested(from);
    assert.equal((await b.k.request(`/api/agents/${id}/sessions/${sid}/interrupt`, { method: 'POST' })).status, 204);
    const reply = await json<Reply>(await pending);
    assert.equal(reply.interrupted, true);
    assert.equal(fake.requests.length, from + 1, 'no further model call');
  });

  test('attach on the process that does not run the turn streams the turn from its owner', async () => {
    const id = await shared('watched');
    fake.enqueue({ text: 'streamed through', delayMs: 1500 });
    const from = fake.requests.length;
    const pending = send(a, id, 'go');
    await requested(from);
    const attached = await b.k.request(`/api/agents/${id}/attach`, { signal: AbortSignal.timeout(3000) });
    assert.equal(attached.status, 200);
    const events = parseSse(await attached.text());
    assert.equal(events.at(-1)?.event, 'done');
    assert.equal(
      events
        .filter((e) => e.event === 'chunk')
        .map((e) => e.data.content)
        .join(''),
      'streamed through',
    );
    assert.equal((await json<Reply>(await pending)).response, 'streamed through');
  });

  // Last: process A stays silent (dead to B) from here on.
  test('when the owner dies: its turn is recorded as interrupted, the session is free, a relayed attach ends saying so', async () => {
    const id = await shared('orphaned');
    fake.enqueue({ text: 'the dead do not answer', delayMs: 8000 });
    const from = fake.requests.length;
    void send(a, id, 'doomed').catch(() => undefined);
    await requested(from);
    const attached = await b.k.request(`/api/agents/${id}/attach`, { signal: AbortSignal.timeout(5000) });
    assert.equal(attached.status, 200);
    const noneYet = (await json<{ traces: unknown[] }>(await b.k.request(`/api/agents/${id}/traces`))).traces.length;
    assert.equal(noneYet, 0);
    // A stops beating, as a killed process would; B finds it dead after three missed beats.
    a.k.kernel.nodes.silence();
    const events = parseSse(await attached.text());
    assert.deepEqual(events.at(-1), { event: 'error', data: { error: OWNER_LOST, status: 503 } });
    const traces = await waitFor(async () => {
      const t = await json<{ traces: Array<{ outcome: string; error: string | null }> }>(await b.k.request(`/api/agents/${id}/traces`));
      return t.traces.length ? t.traces : undefined;
    }, 2000);
    assert.equal(traces![0].outcome, 'interrupted');
    assert.match(traces![0].error ?? '', /was lost/);
    // The session no longer waits for the dead turn.
    fake.enqueue({ text: 'carrying on' });
    const started = Date.now();
    assert.equal((await json<Reply>(await send(b, id, 'still there?'))).response, 'carrying on');
    assert.ok(Date.now() - started < 2000);
  });
});
