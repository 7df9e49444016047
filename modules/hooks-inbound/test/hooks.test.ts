import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setConfig, startAgentTestKernel, startTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import type { TalonEvent } from '@talon/module-sdk';

const TOKEN = 'hook-token-0123456789abcdefghijklmnop';
const API_KEY = 'admin-key-9876543210zyxwvu';
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

describe('inbound hooks', () => {
  let k: AgentTestKernel;
  const events: TalonEvent[] = [];
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const hook = (path: string, body: unknown, token = TOKEN, headers: Record<string, string> = {}) =>
    k.request(`/api/hooks/${path}`, { method: 'POST', headers: { ...bearer(token), ...headers }, json: body });
  type Wake = { type: string; data: { source: string; text: string; mode: string; agentId?: string; wakeId: string } };
  const wakesOf = (id: string) => events.filter((e) => e.type === 'custom' && (e.data as Wake).data.wakeId === id);

  before(async () => {
    k = await startAgentTestKernel({
      only: ['hooks-inbound', 'agents', 'auth', 'error-envelope'],
      config: [`api_key = "${API_KEY}"`, '[hooks]', 'enabled = true', `token = "${TOKEN}"`, 'rate_limit_per_minute = 30', 'max_body_bytes = 1024'].join('\n'),
    });
    const scope = k.kernel.events.scope('test');
    scope.subscribe('*', (e) => void events.push(e));
    scope.commit();
    const res = await k.request('/api/agents', {
      method: 'POST',
      headers: bearer(API_KEY),
      json: { manifest_toml: 'name = "hooked"\n[model]\nprovider = "default"\nmodel = "default"\n' },
    });
    assert.equal(res.status, 201);
  });
  after(async () => {
    await k.stop();
  });

  test('wake is stored, answered, then published as an event triggers can react to', async () => {
    const res = await hook('wake', { text: 'build finished', agent: 'hooked' });
    assert.equal(res.status, 200);
    const body = await json<{ status: string; mode: string; event_id: string; duplicate: boolean }>(res);
    assert.deepEqual({ ...body, event_id: typeof body.event_id }, { status: 'accepted', mode: 'now', event_id: 'string', duplicate: false });
    await waitFor(() => wakesOf(body.event_id).length > 0, 2000, 'the wake event');
    const data = wakesOf(body.event_id)[0].data as Wake;
    assert.equal(data.type, 'webhook.wake');
    assert.equal(data.data.text, 'build finished');
    assert.equal(data.data.source, 'webhook');
    const row = await k.kernel.store.one<{ text: string; delivered_at: number }>('SELECT text, delivered_at FROM hooks_inbound_wakes WHERE id = ?', [
      body.event_id,
    ]);
    assert.equal(row?.text, 'build finished');
    await waitFor(
      async () =>
        (await k.kernel.store.one<{ delivered_at: number | null }>('SELECT delivered_at FROM hooks_inbound_wakes WHERE id = ?', [body.event_id]))?.delivered_at,
      2000,
      'the row marked delivered',
    );
  });

  test('Idempotency-Key: a repeat is answered with the first id and not delivered again; a different wake under it is 409', async () => {
    const key = { 'idempotency-key': 'ci-run-4711' };
    const first = await json<{ event_id: string; duplicate: boolean }>(await hook('wake', { text: 'deployed' }, TOKEN, key));
    const again = await hook('wake', { text: 'deployed' }, TOKEN, key);
    assert.equal(again.status, 200);
    assert.deepEqual(await json(again), { status: 'accepted', mode: 'now', event_id: first.event_id, duplicate: true });
    const other = await hook('wake', { text: 'something else' }, TOKEN, key);
    assert.equal(other.status, 409);
    assert.match((await json<{ error: string }>(other)).error, /Idempotency-Key/);
    assert.equal((await hook('wake', { text: 'x' }, TOKEN, { 'idempotency-key': 'x'.repeat(129) })).status, 400);
    await waitFor(() => wakesOf(first.event_id).length > 0, 2000, 'the first delivery');
    // A later wake is delivered after the repeat was answered: had the repeat been published, it would be there by now.
    const later = await json<{ event_id: string }>(await hook('wake', { text: 'later' }));
    await waitFor(() => wakesOf(later.event_id).length > 0, 2000, 'the later wake');
    assert.equal(wakesOf(first.event_id).length, 1);
  });

  test('hold_delivery: wakes are stored and answered, not published, until it is off; a full backlog answers 503', async () => {
    await setConfig(k, 'hooks.hold_delivery', true);
    await setConfig(k, 'hooks.max_pending_wakes', 2);
    try {
      const a = await json<{ event_id: string }>(await hook('wake', { text: 'held one' }));
      const b = await json<{ event_id: string }>(await hook('wake', { text: 'held two' }));
      const full = await hook('wake', { text: 'one too many' });
      assert.equal(full.status, 503);
      assert.ok(Number(full.headers.get('retry-after')) > 0);
      assert.equal(wakesOf(a.event_id).length + wakesOf(b.event_id).length, 0, 'nothing published while held');
      await setConfig(k, 'hooks.hold_delivery', false);
      await waitFor(() => wakesOf(b.event_id).length > 0, 2000, 'the backlog');
      const order = events.filter((e) => e.type === 'custom').map((e) => (e.data as Wake).data.wakeId);
      assert.ok(order.indexOf(a.event_id) < order.indexOf(b.event_id), 'in arrival order');
    } finally {
      await setConfig(k, 'hooks.hold_delivery', false);
      await setConfig(k, 'hooks.max_pending_wakes', 10000);
    }
  });

  test('retention: delivered wakes older than wake_retention_days are pruned; undelivered ones stay and go out', async () => {
    const db = k.kernel.store;
    const old = Date.now() - 8 * 86_400_000;
    await db.run("INSERT INTO hooks_inbound_wakes (id, text, mode, received_at, delivered_at) VALUES ('old-done', 'x', 'now', ?, ?)", [old, old]);
    await db.run("INSERT INTO hooks_inbound_wakes (id, text, mode, received_at, delivered_at) VALUES ('recent-done', 'x', 'now', ?, ?)", [
      Date.now(),
      Date.now(),
    ]);
    await db.run("INSERT INTO hooks_inbound_wakes (id, text, mode, received_at) VALUES ('old-pending', 'x', 'now', ?)", [old]);
    // A new copy of the module prunes at its start, and publishes what is undelivered at once (the service listens).
    await k.kernel.reloadModule('hooks-inbound');
    const ids = (await db.many<{ id: string }>("SELECT id FROM hooks_inbound_wakes WHERE id IN ('old-done', 'recent-done', 'old-pending') ORDER BY id")).map(
      (r) => r.id,
    );
    assert.deepEqual(ids, ['old-pending', 'recent-done']);
    await waitFor(() => wakesOf('old-pending').length > 0, 2000, 'the undelivered wake, after the reload');
  });

  test('agent runs a blocking turn and returns the reply', async () => {
    k.fake.enqueue({ text: 'pong from the agent', usage: { input: 11, output: 4 } });
    const res = await hook('agent', { message: 'ping', agent: 'hooked' });
    assert.equal(res.status, 200);
    const body = await json<{ status: string; agent_id: string; response: string; usage: { input_tokens: number; output_tokens: number } }>(res);
    assert.equal(body.status, 'completed');
    assert.equal(body.response, 'pong from the agent');
    assert.deepEqual(body.usage, { input_tokens: 11, output_tokens: 4 });
  });

  test('the admin key does not open the hook routes, and the hook token does not open the API', async () => {
    assert.equal((await hook('wake', { text: 'x' }, API_KEY)).status, 401);
    const none = await k.request('/api/hooks/wake', { method: 'POST', json: { text: 'x' } });
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /Bearer realm="talon-hooks"/);
    assert.equal((await k.request('/api/agents', { headers: bearer(TOKEN) })).status, 401);
  });

  test('bad input: 400 for bodies, 404 unknown agents, 413 for big bodies', async () => {
    assert.equal((await hook('wake', {})).status, 400);
    assert.equal((await hook('wake', { text: 'bell\u0007' })).status, 400);
    assert.equal((await hook('agent', { message: 'hi', agent: 'nobody' })).status, 404);
    const big = await hook('agent', { message: 'x'.repeat(2000) });
    assert.equal(big.status, 413);
    assert.equal(typeof (await json(big)).error, 'string');
  });

  test('more requests than the per-minute limit get 429 with Retry-After', async () => {
    let res: Response | undefined;
    for (let i = 0; i < 35 && res?.status !== 429; i++) res = await hook('wake', { text: `n${i}` });
    assert.equal(res!.status, 429);
    assert.ok(Number(res!.headers.get('retry-after')) > 0);
  });
});

describe('inbound hooks: off and misconfigured', () => {
  test('off by default: 404 naming how to enable them', async () => {
    const k = await startTestKernel({ only: ['hooks-inbound', 'error-envelope'] });
    try {
      const res = await k.request('/api/hooks/agent', { method: 'POST', json: { message: 'x' } });
      assert.equal(res.status, 404);
      assert.match((await json<{ error: string }>(res)).error, /\[hooks\] enabled = true/);
    } finally {
      await k.stop();
    }
  });

  test('off, with an api_key: 401 first for a caller without the key or a hook token; the key or the token learns they are off', async () => {
    const k = await startTestKernel({
      only: ['hooks-inbound', 'auth', 'error-envelope'],
      config: `api_key = "${API_KEY}"\n[hooks]\nenabled = false\ntoken = "${TOKEN}"\n`,
    });
    try {
      for (const path of ['/api/hooks/wake', '/api/hooks/agent']) {
        const bare = await k.request(path, { method: 'POST', json: { text: 'x', message: 'x' } });
        assert.equal(bare.status, 401, path);
        assert.match(bare.headers.get('www-authenticate') ?? '', /Bearer/);
        assert.doesNotMatch((await json<{ error: string }>(bare)).error, /enabled/);
        const wrong = await k.request(path, { method: 'POST', headers: { authorization: 'Bearer guess-0123456789abcdef' }, json: {} });
        assert.equal(wrong.status, 401, path);
        for (const credential of [API_KEY, TOKEN]) {
          const known = await k.request(path, { method: 'POST', headers: { authorization: `Bearer ${credential}` }, json: {} });
          assert.equal(known.status, 404, `${path} with ${credential === API_KEY ? 'the api_key' : 'the hook token'}`);
          assert.match((await json<{ error: string }>(known)).error, /\[hooks\] enabled = true/);
        }
      }
    } finally {
      await k.stop();
    }
  });

  test('enabled without a token of 32 characters: start-up refuses', async () => {
    await assert.rejects(
      startTestKernel({ only: ['hooks-inbound'], config: '[hooks]\nenabled = true\ntoken_env = "HOOKS_NO_SUCH_VAR"\n' }),
      /at least 32 characters/,
    );
    await assert.rejects(startTestKernel({ only: ['hooks-inbound'], config: '[hooks]\nenabled = true\ntoken = "short"\n' }), /32 characters/);
  });

  test('a hook token equal to the api_key: start-up refuses (also when it comes from the environment)', async () => {
    // A kernel that starts anyway is stopped, so a failing check fails the test instead of leaving the kernel running.
    const refused = (config: string) =>
      startTestKernel({ only: ['hooks-inbound', 'auth'], config }).then(
        async (k) => {
          await k.stop();
          return 'started';
        },
        (err: Error) => err.message,
      );
    assert.match(await refused(`api_key = "${TOKEN}"\n[hooks]\nenabled = true\ntoken = "${TOKEN}"\n`), /token equals api_key/);
    process.env.HOOKS_TOKEN_SAME_AS_KEY = TOKEN;
    try {
      assert.match(await refused(`api_key = "${TOKEN}"\n[hooks]\nenabled = true\ntoken_env = "HOOKS_TOKEN_SAME_AS_KEY"\n`), /token equals api_key/);
    } finally {
      delete process.env.HOOKS_TOKEN_SAME_AS_KEY;
    }
  });
});
