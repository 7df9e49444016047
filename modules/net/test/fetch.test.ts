/** net.fetch against a local server: SSRF refusals, redirects checked again, DNS pinning, caps, the exemptions. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNet } from '../services/net.ts';
import type { Resolve } from '../services/pinned-fetch.ts';
import { startServer, type TestServer } from './server.ts';

/** Test names resolve here; anything else is unknown (no test reaches the real DNS). */
const NAMES: Record<string, string[]> = {
  'rebind.test': ['127.0.0.1'],
  'private.test': ['10.0.0.5'],
  'mixed.test': ['93.184.216.34', '10.0.0.5'],
  'meta.test': ['169.254.169.254'],
};

describe('net.fetch', () => {
  let server: TestServer;
  const lookups: string[] = [];
  const resolve: Resolve = async (host) => {
    lookups.push(host);
    const addresses = NAMES[host];
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const net = createNet(resolve);
  const local = { allowCidrs: ['127.0.0.1/32'] };
  const base = { timeoutMs: 5000, maxBytes: 10_000 };
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('refuses loopback, private and metadata addresses without sending a request', async () => {
    const sent = server.hits.length;
    await assert.rejects(net.fetch({ ...base, url: `${server.base}/json` }), { name: 'FetchRefused', message: /127\.0\.0\.1 is a loopback address/ });
    await assert.rejects(net.fetch({ ...base, url: 'http://private.test/' }), /10\.0\.0\.5 is a private address/);
    // One private address among public ones refuses the name outright.
    await assert.rejects(net.fetch({ ...base, url: 'http://mixed.test/' }), /10\.0\.0\.5 is a private address/);
    await assert.rejects(net.fetch({ ...base, url: 'http://meta.test/' }), /metadata/);
    await assert.rejects(net.fetch({ ...base, url: 'file:///etc/passwd' }), /unsupported URL scheme 'file:'/);
    await assert.rejects(net.fetch({ ...base, url: 'http://user:pw@example.com/' }), /embedded credentials/);
    await assert.rejects(net.fetch({ ...base, url: 'http://nowhere.test/' }), /could not resolve host 'nowhere\.test': ENOTFOUND/);
    assert.equal(server.hits.length, sent);
  });

  it('checks every redirect hop again: a public or allowed start cannot redirect to a private address', async () => {
    const ok = await net.fetch({ ...base, ...local, url: `${server.base}/redirect?to=/json` });
    assert.deepEqual(JSON.parse(ok.body.toString()), { method: 'GET', body: '' });
    assert.equal(ok.finalUrl, `${server.base}/json`);
    const toLoopback = `${server.base}/redirect?to=${encodeURIComponent('http://[::1]:PORT/json')}`;
    await assert.rejects(net.fetch({ ...base, ...local, url: toLoopback }), /::1 is a loopback address/);
    const toPrivate = `${server.base}/redirect?to=${encodeURIComponent('http://private.test/')}`;
    await assert.rejects(net.fetch({ ...base, ...local, url: toPrivate }), /10\.0\.0\.5 is a private address/);
    await assert.rejects(net.fetch({ ...base, ...local, maxRedirects: 0, url: `${server.base}/redirect?to=/json` }), /too many redirects/);
  });

  it('pins the connection to the address it checked (one lookup per hop; the name is kept as Host)', async () => {
    lookups.length = 0;
    const res = await net.fetch({ ...base, ...local, url: `http://rebind.test:${server.port}/json` });
    assert.equal(res.status, 200);
    assert.deepEqual(lookups, ['rebind.test'], 'the connection used the checked address, not a second lookup');
    assert.equal(server.hits.at(-1)?.host, `rebind.test:${server.port}`);
  });

  it('caps the body (truncated) and the time', async () => {
    const big = await net.fetch({ ...base, ...local, maxBytes: 50, url: `${server.base}/big` });
    assert.equal(big.body.toString(), 'z'.repeat(50));
    assert.equal(big.truncated, true);
    const whole = await net.fetch({ ...base, ...local, url: `${server.base}/big` });
    assert.equal(whole.truncated, false);
    const started = Date.now();
    await assert.rejects(net.fetch({ ...base, ...local, timeoutMs: 300, url: `${server.base}/hang` }), { name: 'TimeoutError' });
    assert.ok(Date.now() - started < 3000);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('stopped')), 100);
    await assert.rejects(net.fetch({ ...base, ...local, signal: stop.signal, url: `${server.base}/hang` }), /stopped/);
  });

  it('exempts a configured origin only: its host and port, not another port or a name resolving to it', async () => {
    const origin = { allowOrigins: [`127.0.0.1:${server.port}`] };
    assert.equal((await net.fetch({ ...base, ...origin, url: `${server.base}/json` })).status, 200);
    assert.equal((await net.fetch({ ...base, allowOrigins: ['127.0.0.1'], url: `${server.base}/json` })).status, 200, 'a host alone: any port');
    await assert.rejects(net.fetch({ ...base, ...origin, url: 'http://127.0.0.1:9/' }), /loopback/);
    await assert.rejects(net.fetch({ ...base, ...origin, url: `http://rebind.test:${server.port}/json` }), /loopback/);
    // allowHosts keeps its wider meaning: an IP entry exempts the address whatever name resolves to it.
    assert.equal((await net.fetch({ ...base, allowHosts: ['127.0.0.1'], url: `http://rebind.test:${server.port}/json` })).status, 200);
    assert.equal((await net.fetch({ ...base, allowHosts: ['*.test'], url: `http://rebind.test:${server.port}/json` })).status, 200);
  });

  it('asks the per-hop check (an agent capability) and sends method, headers and body', async () => {
    await assert.rejects(net.fetch({ ...base, ...local, url: `${server.base}/json`, permitHost: (host, port) => `no ${host}:${port}` }), {
      name: 'FetchRefused',
      message: `no 127.0.0.1:${server.port}`,
    });
    const res = await net.fetch({ ...base, ...local, url: `${server.base}/json`, method: 'post', body: 'data', headers: { 'x-test': '1' } });
    assert.deepEqual(JSON.parse(res.body.toString()), { method: 'POST', body: 'data' });
  });

  it('check applies the same rules without connecting', async () => {
    const sent = server.hits.length;
    await assert.rejects(net.check('http://private.test/'), /10\.0\.0\.5 is a private address/);
    await assert.rejects(net.check('ssh://example.com/'), /unsupported URL scheme/);
    await assert.rejects(net.check('not a url'), /not a valid URL/);
    await net.check('http://private.test/', { allowHosts: ['private.test'] });
    await net.check('http://private.test/', { allowCidrs: ['10.0.0.0/8'] });
    await net.check(`${server.base}/x`, { allowOrigins: [`127.0.0.1:${server.port}`] });
    await assert.rejects(net.check('http://127.0.0.1:9/', { allowOrigins: [`127.0.0.1:${server.port}`] }), /loopback/);
    assert.equal(server.hits.length, sent);
  });
});
