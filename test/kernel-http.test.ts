import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

const extra = path.resolve('test/fixtures/extra');
let k: TestKernel;
before(async () => {
  k = await startTestKernel({
    only: ['body-echo', 'request-id', 'error-envelope'],
    config: `module_paths = ["${extra}"]\nmax_request_body_bytes = 2048\n`,
  });
});
after(() => k.stop());

test('a missing body and an empty JSON body both reach the handler as {}', async () => {
  const none = await k.request('/api/body-echo', { method: 'POST' });
  assert.deepEqual(await none.json(), { got: {} });
  const empty = await k.request('/api/body-echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
  assert.equal(empty.status, 200);
  assert.deepEqual(await empty.json(), { got: {} });
  const given = await k.request('/api/body-echo', { method: 'POST', json: { name: 'x' } });
  assert.deepEqual(await given.json(), { got: { name: 'x' } });
});

test('malformed JSON and a body over max_request_body_bytes are client errors', async () => {
  const bad = await k.request('/api/body-echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
  assert.equal(bad.status, 400);
  const big = await k.request('/api/body-echo', { method: 'POST', json: { name: 'x'.repeat(4096) } });
  assert.equal(big.status, 413);
});

test('a malformed URL gets a JSON error with a request id', async () => {
  const res = await k.request('/%zz');
  assert.equal(res.status, 400);
  assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  assert.equal(typeof ((await res.json()) as { error: unknown }).error, 'string');
});

test('a malformed HTTP request gets a JSON 400 with a request id from the front server', async () => {
  const { connect } = await import('node:net');
  const port = Number(new URL(k.url).port);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('NOT-HTTP\r\n\r\n'));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
  assert.match(raw, /^HTTP\/1\.1 400/);
  assert.match(raw, /x-request-id: [0-9a-f-]{36}/);
  assert.match(raw, /\{"error":"malformed HTTP request"\}/);
});

test('HEAD is answered by the GET route: same status and headers, no body; a path without a GET route is 404', async () => {
  const get = await k.request('/api/body-echo/quiet');
  const head = await k.request('/api/body-echo/quiet', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), get.headers.get('content-length'));
  assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
  assert.match(head.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  assert.equal(await head.text(), '');
  assert.deepEqual(await get.json(), { ok: true }, 'the connection after a HEAD still answers');
  assert.equal((await k.request('/api/body-echo', { method: 'HEAD' })).status, 404);
});
