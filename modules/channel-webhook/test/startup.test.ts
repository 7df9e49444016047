// Starting the webhook channel: a receiver that is merely down (connection refused, 5xx) leaves the channel running
// with a last_error warning, so inbound webhooks are still taken; only bad configuration (a URL that is not one, a
// URL the net module refuses, a receiver refusing the signature) stops it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import { MODULES, postInbound, SECRET } from './helpers.ts';
import { startReceiver } from './receiver.ts';

interface Detail {
  state: string;
  connected: boolean;
  last_error: string | null;
}

let k: AgentTestKernel;
before(async () => {
  k = await startAgentTestKernel({ only: MODULES });
  await k.spawnAgent('helper');
});
after(() => k?.stop());

const configure = async (callback_url: string, token = SECRET): Promise<Detail> => {
  const res = await k.request('/api/channels/webhook/configure', { method: 'POST', json: { token, callback_url, dm_policy: 'open' } });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text) as Detail;
};
const detail = async () => (await (await k.request('/api/channels/webhook')).json()) as Detail;

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

test('a receiver refusing connections: the channel runs with a warning and takes inbound webhooks', async () => {
  const port = await closedPort();
  const started = await configure(`http://127.0.0.1:${port}/hook`);
  assert.equal(started.state, 'connected');
  assert.match(started.last_error ?? '', /could not be reached/);
  const res = await postInbound(k, { id: 'down-1', chat_id: 'c-down', sender_id: 'u1', text: 'anyone there?' });
  assert.equal(res.status, 200, await res.text());
  // The journal took it: the turn ran (the reply to the unreachable callback is retried, then kept as failed).
  await waitFor(() => k.fake.requests.some((r) => JSON.stringify(r.body).includes('anyone there?')), 10_000, 'the turn of the message');
});

test('a receiver answering 503: the channel runs with a warning', async () => {
  const server = http.createServer((_req, res) => res.writeHead(503).end('maintenance'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const started = await configure(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    assert.equal(started.state, 'connected');
    assert.match(started.last_error ?? '', /503/);
    const res = await postInbound(k, { id: '503-1', chat_id: 'c-503', sender_id: 'u1', text: 'hello' });
    assert.equal(res.status, 200, await res.text());
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('a receiver that is up: connected with no warning', async () => {
  const receiver = await startReceiver(SECRET);
  try {
    const started = await configure(receiver.url);
    assert.equal(started.state, 'connected');
    assert.equal(started.last_error, null);
    assert.equal(receiver.pings, 1);
  } finally {
    await receiver.stop();
  }
});

test('bad configuration stops the channel: not a URL, a URL net refuses, a receiver refusing the signature', async () => {
  for (const [url, error] of [
    ['http://[::1/hook', /not a valid URL/],
    ['http://user:secret@127.0.0.1:9/hook', /embedded credentials/],
  ] as const) {
    const started = await configure(url);
    assert.equal(started.state, 'error', url);
    assert.match(started.last_error ?? '', error);
    const res = await postInbound(k, { id: `bad-${url}`, chat_id: 'c1', sender_id: 'u1', text: 'x' });
    assert.equal(res.status, 503, 'no inbound while stopped');
  }
  const receiver = await startReceiver('the-receivers-own-secret');
  try {
    const started = await configure(receiver.url);
    assert.equal(started.state, 'error');
    assert.match(started.last_error ?? '', /refuses the signature/);
  } finally {
    await receiver.stop();
  }
  assert.equal((await detail()).connected, false);
});
