/** net.webFetch, the fetch handed to SDK clients (the A2A client): same rules, streamed bodies, redirects not followed. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNet } from '../services/net.ts';
import { startServer, type TestServer } from './server.ts';

describe('net.webFetch', () => {
  let server: TestServer;
  const net = createNet(async (host) => {
    if (host === 'alias.test') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  });
  let policy: { timeoutMs: number; maxBytes: number; allowOrigins: string[] };
  before(async () => {
    server = await startServer();
    policy = { timeoutMs: 5000, maxBytes: 10_000, allowOrigins: [`127.0.0.1:${server.port}`] };
  });
  after(() => server.close());

  it('refuses what net.fetch refuses, before sending', async () => {
    const sent = server.hits.length;
    await assert.rejects(net.webFetch(`${server.base}/json`, {}, { ...policy, allowOrigins: [] }), { name: 'FetchRefused', message: /loopback/ });
    await assert.rejects(net.webFetch(`http://alias.test:${server.port}/json`, {}, policy), /loopback/);
    await assert.rejects(net.webFetch('http://10.0.0.1/', {}, policy), /private/);
    await assert.rejects(net.webFetch(`${server.base}/json`, { method: 'POST', body: new Uint8Array([1]) }, policy), /only text request bodies/);
    assert.equal(server.hits.length, sent);
  });

  it('sends a Request or a URL with init, and answers a Response', async () => {
    const res = await net.webFetch(
      new Request(`${server.base}/json`, { method: 'POST', body: 'hi', headers: { 'content-type': 'text/plain' } }),
      undefined,
      policy,
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), { method: 'POST', body: 'hi' });
    const missing = await net.webFetch(new URL(`${server.base}/nope`), { method: 'GET' }, policy);
    assert.equal(missing.status, 404);
  });

  it('streams the body: the first event is read before the server ends the response', async () => {
    const res = await net.webFetch(`${server.base}/events`, {}, policy);
    const reader = res.body!.getReader();
    const started = Date.now();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), 'data: one\n\n');
    assert.ok(Date.now() - started < 150, 'the first event came before the second was written');
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    assert.equal(rest, 'data: two\n\n');
  });

  it('hands a redirect back unfollowed (by default), or follows it checked again', async () => {
    const res = await net.webFetch(`${server.base}/redirect?to=/json`, {}, policy);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/json');
    const followed = await net.webFetch(`${server.base}/redirect?to=/json`, {}, { ...policy, maxRedirects: 1 });
    assert.equal(followed.status, 200);
    const away = `${server.base}/redirect?to=${encodeURIComponent('http://10.0.0.1/')}`;
    await assert.rejects(net.webFetch(away, {}, { ...policy, maxRedirects: 1 }), /10\.0\.0\.1 is a private address/);
  });

  it('caps the streamed body and the time', async () => {
    const big = await net.webFetch(`${server.base}/big`, {}, { ...policy, maxBytes: 50 });
    await assert.rejects(big.text(), /larger than 50 bytes/);
    const hang = await net.webFetch(`${server.base}/hang`, {}, { ...policy, timeoutMs: 300 });
    await assert.rejects(hang.text(), { name: 'TimeoutError' });
  });
});
