/**
 * The answers the front server gives itself, before any route or hook runs (issue 10 item 5), carry the
 * security headers too: the module taps the kernel's http.baseHeaders.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { assertSecurityHeaders } from './expect.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const fixtures = path.join(import.meta.dirname, 'fixtures');
const boot = () =>
  startTestKernel({ only: ['security-headers', 'request-id', 'error-envelope', 'slow-probe'], config: `module_paths = [${JSON.stringify(fixtures)}]\n` });

let k: TestKernel;
before(async () => {
  k = await boot();
});
after(() => k?.stop());

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** The last HTTP answer in the bytes a server sent on one connection. */
function lastAnswer(text: string): RawAnswer {
  const start = text.lastIndexOf('HTTP/1.1 ');
  assert.ok(start >= 0, `no HTTP answer in ${JSON.stringify(text)}`);
  const [head, body] = text.slice(start).split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** Writes bytes fetch would never send and reads until the server closes the connection. */
function rawExchange(port: number, bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.on('data', (d: Buffer) => (text += d));
    socket.on('close', () => resolve(lastAnswer(text)));
    socket.on('error', reject);
  });
}

function assertFrontAnswer(answer: { status: number; header: (name: string) => string | null | undefined }, status: number): void {
  assert.equal(answer.status, status);
  assertSecurityHeaders(answer.header);
  assert.match(answer.header('x-request-id') ?? '', UUID);
}

test('400 for a malformed URL', async () => {
  const res = await k.request('/api/agents/%ff%fe');
  assertFrontAnswer({ status: res.status, header: (name) => res.headers.get(name) }, 400);
  assert.match(((await res.json()) as { error: string }).error, /is not a valid url component/);
});

test('400 for a malformed request', async () => {
  const answer = await rawExchange(k.kernel.port!, 'GET / HTTP/1.1\r\nHost: localhost\r\nno colon in this header\r\n\r\n');
  assertFrontAnswer({ status: answer.status, header: (name) => answer.headers.get(name) }, 400);
  assert.deepEqual(JSON.parse(answer.body), { error: 'malformed HTTP request' });
});

test('431 for oversized headers', async () => {
  const answer = await rawExchange(k.kernel.port!, `GET / HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
  assertFrontAnswer({ status: answer.status, header: (name) => answer.headers.get(name) }, 431);
  assert.deepEqual(JSON.parse(answer.body), { error: 'request headers too large' });
});

/** True once the server accepts no new connection (it does that as soon as it starts stopping). */
const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

/**
 * Sends `bytes` on a connection that was opened before the service began to stop: a slow request keeps it
 * open while the server stops accepting. Hands back the last answer on that connection.
 */
async function sendWhileStopping(bytes: string): Promise<RawAnswer> {
  const stopping = await boot();
  const port = stopping.kernel.port!;
  const slowArrived = new Promise<void>((resolve) =>
    stopping.kernel.hooks.kernel.http.request.tap('test', (e) => e.url.startsWith('/probe/slow') && resolve()),
  );
  const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /probe/slow?ms=1000 HTTP/1.1\r\nHost: localhost\r\n\r\n'));
  let text = '';
  socket.on('data', (d: Buffer) => (text += d));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  await slowArrived;
  const stopped = stopping.stop();
  await waitFor(() => refusesConnections(port), 3000, 'the server to stop accepting');
  socket.write(bytes);
  await closed;
  await stopped;
  return lastAnswer(text);
}

test('503 while stopping, to a request on a connection that was open before', async () => {
  const answer = await sendWhileStopping('GET /probe/slow?ms=0 HTTP/1.1\r\nHost: localhost\r\n\r\n');
  assertFrontAnswer({ status: answer.status, header: (name) => answer.headers.get(name) }, 503);
  assert.deepEqual(JSON.parse(answer.body), { error: 'the service is shutting down' });
});

test('503 while stopping, to a WebSocket upgrade', async () => {
  const upgrade =
    'GET /probe/ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';
  const answer = await sendWhileStopping(upgrade);
  assertFrontAnswer({ status: answer.status, header: (name) => answer.headers.get(name) }, 503);
});
