import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { call, createTrigger, deliveries, deliveriesAtLeast, prompts, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type Json = Record<string, unknown>;
/** A pause that proves an absence, after the bounded wait for what must happen: no further fire follows. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('triggers: firing', () => {
  let env: Env;
  let watcher: string;
  const fireCount = async (id: string) => (await call<{ fire_count: number }>(env.k, `/api/triggers/${id}`)).body.fire_count;

  before(async () => {
    env = await startEnv('[triggers]\ncooldown_secs = 0\nmax_chain_depth = 3\n', ['home-channel-probe']);
    watcher = await spawn(env.k, 'watcher');
  });
  beforeEach(() => {
    env.fake.setFallback({ text: 'noted' });
  });
  after(() => stopEnv(env));

  test('agent_spawned with a glob fires for matching names only; {{event}} is a line about the event; the reply is kept and listed', async () => {
    const id = await createTrigger(env.k, { agent_id: watcher, pattern: { agent_spawned: { name_pattern: 'worker-?' } }, prompt_template: 'New: {{event}}' });
    const before = prompts(env.fake).length;
    const w = await spawn(env.k, 'worker-1');
    await spawn(env.k, 'worker-12');
    await spawn(env.k, 'helper');
    const [delivery] = await deliveriesAtLeast(env.k, watcher, 1);
    assert.deepEqual(prompts(env.fake).slice(before), [`New: Agent 'worker-1' (id: ${w}) was spawned`]);
    assert.equal(await fireCount(id), 1);
    assert.equal(delivery.status, 'kept');
    assert.equal(delivery.source, 'trigger');
    assert.equal(delivery.source_id, id);
    assert.equal(delivery.response, 'noted');
    // Kept means: the reply is in the agent's session.
    const session = (await call<{ messages: Array<{ role: string; content: string }> }>(env.k, `/api/agents/${watcher}/session`)).body;
    assert.ok(session.messages.some((m) => m.role === 'Assistant' && m.content === 'noted'));
    await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('lifecycle and agent_terminated triggers really fire (on kill too)', async () => {
    const life = await createTrigger(env.k, { agent_id: watcher, pattern: { lifecycle: {} }, prompt_template: 'L {{event}}' });
    const gone = await createTrigger(env.k, { agent_id: watcher, pattern: { agent_terminated: {} }, prompt_template: 'T {{event}}' });
    const victim = await spawn(env.k, 'victim');
    await call(env.k, `/api/agents/${victim}`, { method: 'DELETE' });
    await waitFor(async () => (await fireCount(life)) === 2 && (await fireCount(gone)) === 1, 5000, 'fires');
    await waitFor(() => prompts(env.fake).some((p) => p === `T Agent 'victim' (id: ${victim}) was terminated`), 5000, 'terminated prompt');
    for (const id of [life, gone]) await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('task_posted: self fires only for tasks assigned to the owner (UUID or name); any for every task', async () => {
    const self = await createTrigger(env.k, { agent_id: watcher, pattern: { task_posted: { assignee_match: 'self' } }, prompt_template: 'mine: {{event}}' });
    const any = await createTrigger(env.k, { agent_id: watcher, pattern: { task_posted: { assignee_match: 'any' } }, prompt_template: 'any: {{event}}' });
    const other = await spawn(env.k, 'someone');
    await call(env.k, '/api/tasks', { method: 'POST', json: { title: 'for me', assigned_to: 'watcher' } });
    await call(env.k, '/api/tasks', { method: 'POST', json: { title: 'for me too', assigned_to: watcher } });
    await call(env.k, '/api/tasks', { method: 'POST', json: { title: 'not mine', assigned_to: other } });
    await waitFor(async () => (await fireCount(any)) === 3, 5000, 'any fires');
    await sleep(200);
    assert.equal(await fireCount(self), 2);
    for (const id of [self, any]) await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('max_fires: the trigger fires that often, then disables itself', async () => {
    const id = await createTrigger(env.k, { agent_id: watcher, pattern: { custom: { event_type: 'ping' } }, prompt_template: '{{event}}', max_fires: 2 });
    for (let i = 0; i < 4; i++) env.publish('custom', { type: 'ping', data: i });
    await waitFor(async () => (await fireCount(id)) === 2, 5000, 'two fires');
    await sleep(200);
    const t = (await call<Json>(env.k, `/api/triggers/${id}`)).body;
    assert.equal(t.fire_count, 2);
    assert.equal(t.enabled, false);
    assert.ok(t.last_fired_at);
    const res = await call<{ error: string }>(env.k, `/api/triggers/${id}`, { method: 'PATCH', json: { enabled: true } });
    assert.equal(res.status, 409);
    assert.equal((await call<Json>(env.k, `/api/triggers/${id}`, { method: 'PATCH', json: { enabled: true, max_fires: 3 } })).body.enabled, true);
  });

  test('cooldown is kept per subject: the same task subject waits, another one fires', async () => {
    const id = await createTrigger(env.k, {
      agent_id: watcher,
      pattern: { memory_update: { key_pattern: 'pref.*' } },
      prompt_template: '{{event}}',
      cooldown_secs: 60,
    });
    env.publish('memory.updated', { agentId: watcher, operation: 'set', key: 'pref.color' });
    env.publish('memory.updated', { agentId: watcher, operation: 'set', key: 'pref.color' });
    env.publish('memory.updated', { agentId: watcher, operation: 'set', key: 'pref.size' });
    env.publish('memory.updated', { agentId: watcher, operation: 'set', key: 'other' });
    await waitFor(async () => (await fireCount(id)) === 2, 5000, 'fires');
    await sleep(200);
    assert.equal(await fireCount(id), 2);
    await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('triggers, their fire counts and their cooldown stamps survive a restart of the module', async () => {
    const id = await createTrigger(env.k, {
      agent_id: watcher,
      pattern: { memory_update: { key_pattern: 'keep.*' } },
      prompt_template: '{{event}}',
      cooldown_secs: 60,
    });
    // Events about an agent that ran no fired turn lately (events about the watcher may count as a chain).
    const about = '00000000-0000-4000-8000-00000000beef';
    env.publish('memory.updated', { agentId: about, operation: 'set', key: 'keep.a' });
    await waitFor(async () => (await fireCount(id)) === 1, 5000, 'first fire');
    const before = (await call<Json>(env.k, `/api/triggers/${id}`)).body;
    assert.equal((await env.k.kernel.reloadModule('triggers')).ok, true);
    assert.deepEqual((await call<Json>(env.k, `/api/triggers/${id}`)).body, before);
    env.publish('memory.updated', { agentId: about, operation: 'set', key: 'keep.a' });
    env.publish('memory.updated', { agentId: about, operation: 'set', key: 'keep.b' });
    await waitFor(async () => (await fireCount(id)) === 2, 5000, 'the other subject fires');
    await sleep(200);
    assert.equal(await fireCount(id), 2, 'the cooled-down subject stays cooled down after the restart');
    await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('target_agent_id routes the message to another agent; session_mode new runs it in a fresh session', async () => {
    const target = await spawn(env.k, 'target');
    const current = (await call<{ session_id: string }>(env.k, `/api/agents/${target}`)).body.session_id;
    const id = await createTrigger(env.k, {
      agent_id: watcher,
      pattern: { content_match: { substring: 'DEPLOY' } },
      prompt_template: 'Handle: {{event}}',
      target_agent_id: target,
      session_mode: 'new',
      // Its own fired message mentions the deploy too: the cooldown (whole trigger, for content_match) stops that echo.
      cooldown_secs: 60,
    });
    env.publish('custom', { type: 'ops', data: { note: 'deploy finished' } });
    env.publish('custom', { type: 'ops', data: { note: 'unrelated' } });
    const [d] = await deliveriesAtLeast(env.k, target, 1);
    assert.equal(d.source_id, id);
    assert.notEqual(d.session_id, current);
    assert.equal(d.cause, 'Custom event: type=ops, payload={"note":"deploy finished"}');
    await sleep(300);
    assert.equal((await deliveries(env.k, target)).length, 1);
    assert.equal((await deliveries(env.k, watcher)).filter((x) => x.source_id === id).length, 0);
    await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('session_mode null inherits the manifest: an agent whose manifest says session_mode = "new" gets a fresh session', async () => {
    const fresh = await spawn(env.k, 'fresh-sessions', 'session_mode = "new"');
    const plain = await spawn(env.k, 'plain-sessions');
    const sessionOf = async (id: string) => (await call<{ session_id: string }>(env.k, `/api/agents/${id}`)).body.session_id;
    for (const agent of [fresh, plain]) await createTrigger(env.k, { agent_id: agent, pattern: { custom: { event_type: 'inherit' } }, prompt_template: 'x' });
    env.publish('custom', { type: 'inherit', data: null });
    const [f] = await deliveriesAtLeast(env.k, fresh, 1);
    const [p] = await deliveriesAtLeast(env.k, plain, 1);
    assert.notEqual(f.session_id, await sessionOf(fresh));
    assert.equal(p.session_id, await sessionOf(plain), 'without a manifest setting: the agent’s current session');
  });

  test('an agent with a home channel gets the reply there (delivered), not only in the session', async () => {
    const homed = await spawn(env.k, 'homed-bot');
    const id = await createTrigger(env.k, { agent_id: homed, pattern: { custom: { event_type: 'wake' } }, prompt_template: 'wake up' });
    env.fake.setFallback({ text: 'good morning' });
    env.publish('custom', { type: 'wake', data: null });
    const [d] = await deliveriesAtLeast(env.k, homed, 1);
    assert.equal(d.status, 'delivered');
    assert.equal(d.channel, 'test-channel');
    const got = (await call<Array<{ agentId: string; text: string; source: string }>>(env.k, '/api/test/home-channel')).body;
    assert.deepEqual(got.at(-1), { agentId: homed, agentName: 'homed-bot', sessionId: d.session_id, text: 'good morning', source: 'trigger', sourceId: id });
  });

  test('a fire whose turn fails is listed as failed; the next event still fires', async () => {
    const id = await createTrigger(env.k, { agent_id: watcher, pattern: { custom: { event_type: 'flaky' } }, prompt_template: 'try' });
    env.fake.enqueue({ status: 500 });
    env.publish('custom', { type: 'flaky', data: 1 });
    await waitFor(async () => (await deliveries(env.k, watcher)).some((d) => d.source_id === id && d.status === 'failed'), 5000, 'failed delivery');
    env.publish('custom', { type: 'flaky', data: 2 });
    await waitFor(async () => (await deliveries(env.k, watcher)).some((d) => d.source_id === id && d.status === 'kept'), 5000, 'next fire');
    // Both turns reported (failed, then kept): neither is left pending, to be recorded as lost at the next start.
    const pending = await env.k.kernel.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM triggers_fires WHERE trigger_id = ?', [id]);
    assert.equal(Number(pending?.n), 0);
    await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('chains are bounded: a trigger fired by its own replies stops at max_chain_depth', async () => {
    const looper = await spawn(env.k, 'looper');
    const id = await createTrigger(env.k, { agent_id: looper, pattern: { event: { type: 'turn.completed' } }, prompt_template: 'again: {{event}}' });
    await call(env.k, `/api/agents/${looper}/message`, { method: 'POST', json: { message: 'start' } });
    await waitFor(async () => (await fireCount(id)) === 3, 5000, 'three fires');
    await sleep(500);
    assert.equal(await fireCount(id), 3, 'max_chain_depth = 3');
    await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' });
  });

  test('a task for an agent that no trigger of its own fires for wakes it; a trigger of its own replaces the wake', async () => {
    const helper = await spawn(env.k, 'tasker');
    const t = (
      await call<{ id: string }>(env.k, '/api/tasks', { method: 'POST', json: { title: 'sort the files', description: 'by date', assigned_to: 'tasker' } })
    ).body;
    const [d] = await deliveriesAtLeast(env.k, helper, 1);
    assert.equal(d.source, 'task');
    assert.equal(d.source_id, t.id);
    assert.ok(
      prompts(env.fake).includes(
        `[TASK BOARD] A task was posted for you: "sort the files" (id ${t.id}).\nDescription: by date\nClaim it with task_claim, do the work, then report the result with task_complete.`,
      ),
    );
    const own = await createTrigger(env.k, { agent_id: helper, pattern: { task_posted: { assignee_match: 'self' } }, prompt_template: 'own: {{event}}' });
    await call(env.k, '/api/tasks', { method: 'POST', json: { title: 'second', assigned_to: helper } });
    await waitFor(async () => (await deliveries(env.k, helper)).length === 2, 5000, 'second delivery');
    await sleep(300);
    const all = await deliveries(env.k, helper);
    assert.equal(all.length, 2, 'one turn: the trigger, no wake');
    assert.equal(all[0].source_id, own);
  });

  test('killing an agent removes its triggers and disables the ones aimed at it', async () => {
    const a = await spawn(env.k, 'short-lived');
    const b = await spawn(env.k, 'aimed-at');
    const owned = await createTrigger(env.k, { agent_id: a, pattern: 'all', prompt_template: 'x' });
    const aimed = await createTrigger(env.k, { agent_id: watcher, pattern: { custom: {} }, prompt_template: 'x', target_agent_id: b, enabled: false });
    await call(env.k, `/api/triggers/${aimed}`, { method: 'PATCH', json: { enabled: true } });
    await call(env.k, `/api/agents/${a}`, { method: 'DELETE' });
    await call(env.k, `/api/agents/${b}`, { method: 'DELETE' });
    await waitFor(async () => (await call(env.k, `/api/triggers/${owned}`)).status === 404, 3000, 'owned trigger removed');
    await waitFor(async () => (await call<Json>(env.k, `/api/triggers/${aimed}`)).body.enabled === false, 3000, 'aimed trigger disabled');
  });

  test('GET /api/agents/{id}/deliveries: {agent_id, deliveries, total}; 400 for a bad id, 404 for an unknown agent', async () => {
    const res = await call<Json>(env.k, `/api/agents/${watcher}/deliveries?limit=2`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['agent_id', 'deliveries', 'limit', 'offset', 'total']);
    assert.equal((res.body.deliveries as unknown[]).length, 2);
    assert.ok((res.body.total as number) > 2);
    assert.equal((await call(env.k, '/api/agents/nope/deliveries')).status, 400);
    assert.equal((await call(env.k, '/api/agents/00000000-0000-4000-8000-000000000000/deliveries')).status, 404);
  });
});
