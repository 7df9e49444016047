import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, startTestKernel, waitFor, type TestKernel } from '@talon/module-sdk/testing';
import type { AnyEvent } from '@talon/module-sdk';

const TOKEN = 'hook-token-0123456789abcdefghijklmnop';
const API_KEY = 'admin-key-9876543210zyxwvu';
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

describe('inbound hooks', () => {
  let k: TestKernel;
  const fake = new FakeProvider();
  const events: AnyEvent[] = [];
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const hook = (path: string, body: unknown, token = TOKEN) => k.request(`/api/hooks/${path}`, { method: 'POST', headers: bearer(token), json: body });

  before(async () => {
    process.env.HOOKS_FAKE_KEY = 'sk-fake';
    await fake.start();
    k = await startTestKernel({
      only: ['hooks-inbound', 'agents', 'llm-openai', 'auth', 'error-envelope'],
      config: [
        `api_key = "${API_KEY}"`,
        '[default_model]',
        'provider = "openai"',
        'model = "fake-model"',
        `base_url = "${fake.url}/v1"`,
        'api_key_env = "HOOKS_FAKE_KEY"',
        '[hooks]',
        'enabled = true',
        `token = "${TOKEN}"`,
        'rate_limit_per_minute = 8',
        'max_body_bytes = 1024',
      ].join('\n'),
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
    await fake.stop();
  });

  test('wake publishes an event triggers can react to', async () => {
    const res = await hook('wake', { text: 'build finished', agent: 'hooked' });
    assert.equal(res.status, 200);
    const body = await json<{ status: string; mode: string; event_id: string }>(res);
    assert.equal(body.status, 'accepted');
    assert.equal(body.mode, 'now');
    const event = (await waitFor(() => events.find((e) => e.id === body.event_id), 2000, 'the wake event'))!;
    assert.equal(event.type, 'custom');
    assert.deepEqual((event.data as { type: string }).type, 'webhook.wake');
    assert.equal((event.data as { data: { text: string } }).data.text, 'build finished');
  });

  test('agent runs a blocking turn and returns the reply', async () => {
    fake.enqueue({ text: 'pong from the agent', usage: { input: 11, output: 4 } });
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
    for (let i = 0; i < 10 && res?.status !== 429; i++) res = await hook('wake', { text: `n${i}` });
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
