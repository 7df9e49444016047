import { after, before, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { fakeServer, json, service, type FakeServer } from './helpers.ts';

const TOKEN = 'gho_fakeDeviceFlowToken0123456789';
let k: TestKernel;
let github: FakeServer;
/** What the fake token endpoint answers next, per device code. */
const tokenReplies = new Map<string, Record<string, unknown>>();
let codes = 0;

before(async () => {
  github = await fakeServer((req) => {
    const form = new URLSearchParams(req.body);
    if (req.path === '/login/device/code') {
      assert.equal(form.get('client_id'), 'test-client');
      codes++;
      return {
        json: { device_code: `dev-${codes}`, user_code: `ABCD-000${codes}`, verification_uri: 'https://github.com/login/device', expires_in: 900, interval: 5 },
      };
    }
    if (req.path === '/login/oauth/access_token') {
      assert.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:device_code');
      return { json: tokenReplies.get(form.get('device_code') ?? '') ?? { error: 'bad_verification_code' } };
    }
    return { status: 404, text: 'no' };
  });
  k = await startTestKernel({
    only: ['catalog'],
    config: `[catalog.copilot_oauth]\nclient_id = "test-client"\ndevice_code_url = "${github.url}/login/device/code"\ntoken_url = "${github.url}/login/oauth/access_token"\n`,
  });
});
after(async () => {
  mock.timers.reset();
  await k?.stop();
  await github?.close();
});

async function start(): Promise<Record<string, unknown>> {
  const res = await k.request('/api/providers/github-copilot/oauth/start', { method: 'POST' });
  assert.equal(res.status, 200);
  return json(res);
}

test('start returns the device and user codes from the device endpoint', async () => {
  const s = await start();
  assert.deepEqual(Object.keys(s).sort(), ['device_code', 'expires_in', 'interval', 'poll_id', 'user_code', 'verification_uri']);
  assert.equal(s.user_code, `ABCD-000${codes}`);
  assert.equal(s.expires_in, 900);
});

test('poll: pending, then authorized — the token becomes the provider key', async () => {
  const s = await start();
  tokenReplies.set(s.device_code as string, { error: 'authorization_pending' });
  const pending = await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`);
  assert.equal(pending.status, 200);
  assert.equal((await json(pending)).status, 'pending');
  tokenReplies.set(s.device_code as string, { error: 'slow_down', interval: 10 });
  assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`))).status, 'pending');
  assert.equal(service(k).apiKey('github-copilot'), process.env.GITHUB_TOKEN || undefined);

  tokenReplies.set(s.device_code as string, { access_token: TOKEN, token_type: 'bearer', scope: 'read:user' });
  const done = await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`);
  const text = await done.text();
  assert.equal(done.status, 200);
  assert.deepEqual(JSON.parse(text), { status: 'authorized', provider: 'github-copilot' });
  assert.ok(!text.includes(TOKEN));
  assert.equal(service(k).apiKey('github-copilot'), TOKEN);
  const p = await json(await k.request('/api/providers/github-copilot'));
  assert.equal(p.auth_status, 'configured');
  // a finished flow is gone
  assert.equal((await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`)).status, 404);
});

test('poll: expired once expires_in has passed (simulated clock), without asking the token endpoint', async () => {
  const s = await start();
  tokenReplies.set(s.device_code as string, { error: 'authorization_pending' });
  mock.timers.enable({ apis: ['Date'], now: Date.now() });
  try {
    assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`))).status, 'pending');
    mock.timers.tick(901_000);
    const asked = github.requests.length;
    assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`))).status, 'expired');
    assert.equal(github.requests.length, asked);
  } finally {
    mock.timers.reset();
  }
  // the endpoint's own expired_token answer also ends the flow
  const s2 = await start();
  tokenReplies.set(s2.device_code as string, { error: 'expired_token' });
  assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s2.poll_id}`))).status, 'expired');
});

test('poll: unknown poll id is 404; an endpoint error is 502', async () => {
  const res = await k.request('/api/providers/github-copilot/oauth/poll/not-a-poll-id');
  assert.equal(res.status, 404);
  assert.match(JSON.stringify(await json(res)), /not-a-poll-id/);
  const s = await start();
  tokenReplies.set(s.device_code as string, { error: 'incorrect_client_credentials' });
  const bad = await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`);
  assert.equal(bad.status, 502);
  assert.match(JSON.stringify(await json(bad)), /incorrect_client_credentials/);
});
