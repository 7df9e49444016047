import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import { configure, sent, startChannels, until } from './helpers.ts';

let k: AgentTestKernel;
before(async () => {
  k = await startChannels();
  await k.spawnAgent('helper');
});
after(() => k?.stop());

const get = async (path: string) => {
  const res = await k.request(path);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

test('GET /api/channels lists every loaded adapter, unconfigured ones too', async () => {
  const { status, body } = await get('/api/channels');
  assert.equal(status, 200);
  assert.equal(body.total, 1);
  assert.deepEqual(body.channels[0], {
    name: 'fake',
    enabled: false,
    has_token: false,
    configured: false,
    connected: false,
    state: 'stopped',
    holder: null,
    last_error: null,
  });
});

test('an unknown channel is a 404 naming it on every route', async () => {
  for (const [method, path] of [
    ['GET', '/api/channels/nope'],
    ['POST', '/api/channels/nope/configure'],
    ['DELETE', '/api/channels/nope/configure'],
    ['POST', '/api/channels/nope/test'],
    ['PUT', '/api/channels/nope/enable'],
  ]) {
    const res = await k.request(path, { method, ...(method === 'POST' ? { json: {} } : {}) });
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.match(((await res.json()) as { error: string }).error, /'nope'/);
  }
});

test('test on a channel not configured is a 409', async () => {
  const res = await k.request('/api/channels/fake/test', { method: 'POST', json: { to: 'c1' } });
  assert.equal(res.status, 409);
});

test('configure validates the adapter fields by its schema, naming the field', async () => {
  let res = await configure(k, { token: 't', limit: 'ten' });
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /'limit'/);
  res = await configure(k, { token: 't', colour: 'red' });
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /'colour'/);
  res = await configure(k, { token: 't', dm_policy: 'sometimes' });
  assert.equal(res.status, 400);
});

test('configure stores the token as a secret (never echoed), starts the adapter, and test sends', async () => {
  const res = await configure(k, { token: 'sekret-token', agent_name: 'helper', dm_policy: 'open', room: 'r1' });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.doesNotMatch(text, /sekret-token/);
  const body = JSON.parse(text);
  assert.equal(body.has_token, true);
  assert.equal(body.connected, true);
  const detail = await get('/api/channels/fake');
  assert.equal(detail.status, 200);
  assert.doesNotMatch(JSON.stringify(detail.body), /sekret-token/);
  assert.equal(detail.body.config.room, 'r1');
  assert.deepEqual(detail.body.secrets_set, { token: true });
  // No target: neither `to` nor default_conversation.
  assert.equal((await k.request('/api/channels/fake/test', { method: 'POST', json: {} })).status, 400);
  const sentRes = await k.request('/api/channels/fake/test', { method: 'POST', json: { to: 'c9' } });
  assert.equal(sentRes.status, 200);
  const answer = (await sentRes.json()) as { status: string; channel: string; message_id: string };
  assert.equal(answer.status, 'sent');
  assert.equal(answer.channel, 'fake');
  const rows = await sent(k);
  assert.equal(rows.at(-1)!.chatId, 'c9');
  assert.ok(rows.some((r) => r.messageId === answer.message_id));
  // default_conversation is the target when no `to` is given; a partial configure keeps the token and fields.
  assert.equal((await configure(k, { default_conversation: 'home' })).status, 200);
  assert.equal((await k.request('/api/channels/fake/test', { method: 'POST', json: {} })).status, 200);
  assert.equal((await sent(k)).at(-1)!.chatId, 'home');
  assert.equal((await get('/api/channels/fake')).body.has_token, true);
});

test('disable stops the channel keeping its configuration; enable starts it again', async () => {
  let res = await k.request('/api/channels/fake/disable', { method: 'PUT' });
  assert.equal(res.status, 200);
  let body = (await res.json()) as Record<string, unknown>;
  assert.equal(body.enabled, false);
  assert.equal(body.connected, false);
  assert.equal(body.has_token, true);
  assert.equal((await k.request('/api/channels/fake/test', { method: 'POST', json: { to: 'x' } })).status, 409);
  res = await k.request('/api/channels/fake/enable', { method: 'PUT' });
  body = (await res.json()) as Record<string, unknown>;
  assert.equal(body.connected, true);
});

test('reload restarts configured adapters', async () => {
  const res = await k.request('/api/channels/reload', { method: 'POST' });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'ok', started: ['fake'] });
});

test('bad credentials stop the adapter with last_error', async () => {
  await configure(k, { token: 'bad' });
  const { body } = await get('/api/channels/fake');
  assert.equal(body.connected, false);
  assert.match(body.last_error, /401/);
  await configure(k, { token: 'good' });
  await until(async () => (await get('/api/channels/fake')).body.connected, 'reconnected');
});

test('QR routes refuse a channel without QR sign-in', async () => {
  assert.equal((await k.request('/api/channels/fake/qr/start', { method: 'POST' })).status, 400);
  assert.equal((await k.request('/api/channels/fake/qr/status')).status, 404);
});

test('DELETE configure removes the configuration and stops the channel; a second DELETE is 404', async () => {
  assert.equal((await k.request('/api/channels/fake/configure', { method: 'DELETE' })).status, 200);
  const { body } = await get('/api/channels/fake');
  assert.equal(body.configured, false);
  assert.equal(body.connected, false);
  assert.equal((await k.request('/api/channels/fake/configure', { method: 'DELETE' })).status, 404);
});
