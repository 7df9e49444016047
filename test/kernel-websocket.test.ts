import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import WebSocket from 'ws';
import { startTestKernel } from '@talon/testing';

const extra = path.resolve('test/fixtures/extra');

async function connect(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url.replace('http', 'ws') + '/api/echo/ws');
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

test('WebSocket routes are served through the front server and listed in the route table', async () => {
  const k = await startTestKernel({ only: ['ws-echo'], config: `module_paths = ["${extra}"]\n` });
  try {
    const ws = await connect(k.url);
    const reply = new Promise<string>((resolve) => ws.once('message', (d) => resolve(String(d))));
    ws.send('hi');
    assert.equal(await reply, 'hi');
    const route = k.kernel.routes().find((r) => r.url === '/api/echo/ws');
    assert.equal(route?.websocket, true);
    assert.equal((route?.schema as { hide?: boolean }).hide, undefined);
    ws.close();
  } finally {
    await k.stop();
  }
});

test('shutdown completes with an open WebSocket, which is closed', async () => {
  const k = await startTestKernel({ only: ['ws-echo'], config: `module_paths = ["${extra}"]\n` });
  const ws = await connect(k.url);
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const started = Date.now();
  await k.stop();
  assert.ok(Date.now() - started < 3_000, `shutdown took ${Date.now() - started} ms`);
  assert.ok((await closed) > 0);
});

test('a reload does not wait for an open SSE stream to drain', async () => {
  const k = await startTestKernel({ only: ['logs', 'body-echo'], config: `module_paths = ["${extra}"]\n` });
  const stream = new AbortController();
  try {
    const res = await k.request('/api/logs/stream', { signal: stream.signal });
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const started = Date.now();
    assert.ok((await k.kernel.reloadModule('body-echo')).ok);
    await k.kernel.settled();
    assert.ok(Date.now() - started < 3_000, `the reload's drain took ${Date.now() - started} ms`);
  } finally {
    stream.abort();
    await k.stop();
  }
});

test('a reload of another module keeps a WebSocket open; a reload of its own module closes it with 1001', async () => {
  const k = await startTestKernel({ only: ['ws-echo', 'body-echo'], config: `module_paths = ["${extra}"]\n` });
  try {
    const ws = await connect(k.url);
    const echo = (text: string) =>
      new Promise<string>((resolve) => {
        ws.once('message', (d) => resolve(String(d)));
        ws.send(text);
      });
    assert.ok((await k.kernel.reloadModule('body-echo')).ok);
    await k.kernel.settled();
    assert.equal(ws.readyState, WebSocket.OPEN);
    assert.equal(await echo('still here'), 'still here');
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    assert.ok((await k.kernel.reloadModule('ws-echo')).ok);
    assert.equal(await closed, 1001);
    const again = await connect(k.url);
    again.close();
  } finally {
    await k.stop();
  }
});
