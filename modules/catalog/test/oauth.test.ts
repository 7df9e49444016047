import { after, before, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { fakeGithub, json, service, type FakeGithub } from './helpers.ts';

const TOKEN = 'gho_fakeDeviceFlowToken0123456789';
let k: TestKernel;
let github: FakeGithub;

before(async () => {
  github = await fakeGithub();
  k = await startTestKernel({ only: ['catalog'], config: github.config });
});
after(async () => {
  mock.timers.reset();
  await k?.stop();
  await github?.server.close();
});

async function start(): Promise<Record<string, unknown>> {
  const res = await k.request('/api/providers/github-copilot/oauth/start', { method: 'POST' });
  assert.equal(res.status, 200);
  return json(res);
}

test('start returns the device and user codes from the device endpoint', async () => {
  const s = await start();
  assert.deepEqual(Object.keys(s).sort(), ['device_code', 'expires_in', 'interval', 'poll_id', 'user_code', 'verification_uri']);
  assert.equal(s.user_code, `ABCD-000${github.codes()}`);
  assert.equal(s.expires_in, 900);
});

test('poll: pending, then authorized — the token becomes the provider key', async () => {
  const s = await start();
  github.tokenReplies.set(s.device_code as string, { error: 'authorization_pending' });
  const pending = await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`);
  assert.equal(pending.status, 200);
  assert.equal((await json(pending)).status, 'pending');
  github.tokenReplies.set(s.device_code as string, { error: 'slow_down', interval: 10 });
  assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`))).status, 'pending');
  assert.equal(service(k).apiKey('github-copilot'), process.env.GITHUB_TOKEN || undefined);

  github.tokenReplies.set(s.device_code as string, { access_token: TOKEN, token_type: 'bearer', scope: 'read:user' });
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
  github.tokenReplies.set(s.device_code as string, { error: 'authorization_pending' });
  mock.timers.enable({ apis: ['Date'], now: Date.now() });
  try {
    assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`))).status, 'pending');
    mock.timers.tick(901_000);
    const asked = github.server.requests.length;
    assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`))).status, 'expired');
    assert.equal(github.server.requests.length, asked);
  } finally {
    mock.timers.reset();
  }
  // the endpoint's own expired_token answer also ends the flow
  const s2 = await start();
  github.tokenReplies.set(s2.device_code as string, { error: 'expired_token' });
  assert.equal((await json(await k.request(`/api/providers/github-copilot/oauth/poll/${s2.poll_id}`))).status, 'expired');
});

test('poll: unknown poll id is 404; an endpoint error is 502', async () => {
  const res = await k.request('/api/providers/github-copilot/oauth/poll/not-a-poll-id');
  assert.equal(res.status, 404);
  assert.match(JSON.stringify(await json(res)), /not-a-poll-id/);
  const s = await start();
  github.tokenReplies.set(s.device_code as string, { error: 'incorrect_client_credentials' });
  const bad = await k.request(`/api/providers/github-copilot/oauth/poll/${s.poll_id}`);
  assert.equal(bad.status, 502);
  assert.match(JSON.stringify(await json(bad)), /incorrect_client_credentials/);
});
