import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webFetchTool } from '../tools/web-fetch.ts';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { netFetch, type NetFetch } from '@talon/net';
import { agentRecord, config, fakeDeps as toolDeps, toolCtx } from './helpers.ts';

describe('web_fetch against a local server', () => {
  const hits: Array<{ url: string; host?: string; method: string; body: string }> = [];
  let server: http.Server;
  let base: string;
  let port: number;
  // web_fetch goes through the net module's service, as in the service (a kernel with net alone provides it).
  let k: TestKernel;
  let net: NetFetch;
  const fakeDeps = (over: Parameters<typeof toolDeps>[0] = {}) => toolDeps({ ...over, net });
  before(async () => {
    k = await startTestKernel({ only: ['net'] });
    net = k.kernel.services.view<NetFetch>(netFetch.id);
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        hits.push({ url: req.url ?? '', host: req.headers.host, method: req.method ?? '', body });
        if (req.url === '/page') {
          res.setHeader('content-type', 'text/html; charset=utf-8');
          res.end('<html><head><title>T</title><script>evil()</script></head><body><h1>Hello</h1><p>A &amp; B <a href="/x">link</a></p></body></html>');
        } else if (req.url === '/json') {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ method: req.method, body }));
        } else if (req.url === '/redirect-local') {
          res.writeHead(302, { location: '/json' }).end();
        } else if (req.url === '/redirect-blocked') {
          res.writeHead(302, { location: `http://[::1]:${port}/json` }).end();
        } else if (req.url === '/hang') {
          res.write('partial'); // and never end
        } else if (req.url === '/big') {
          res.end('z'.repeat(200));
        } else {
          res.writeHead(404).end('missing');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await k.stop();
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  const allowLocal = config({ web: { allow_cidrs: ['127.0.0.1/32'] } });
  const agent = agentRecord({ capabilities: { network: ['*'] } });

  it('refuses loopback unless allow-listed, without sending a request', async () => {
    const before = hits.length;
    const out = await webFetchTool(fakeDeps()).execute({ url: `${base}/json` }, toolCtx(agent));
    assert.equal(out.isError, true);
    assert.match(out.content, /^Blocked: SSRF protection: .*127\.0\.0\.1 is a loopback address/);
    assert.equal(hits.length, before);
  });

  it('fetches an allow-listed local URL; HTML becomes readable text', async () => {
    const out = await webFetchTool(fakeDeps({ config: allowLocal })).execute({ url: `${base}/page` }, toolCtx(agent));
    assert.equal(out.isError, false);
    assert.equal(out.content, '# T\n\n# Hello\n\nA & B [link](/x)', 'title first, script dropped, entities decoded');
  });

  it('sends other methods with headers and body and returns the raw body', async () => {
    const out = await webFetchTool(fakeDeps({ config: allowLocal })).execute(
      { url: `${base}/json`, method: 'POST', body: 'data', headers: { 'x-test': '1' } },
      toolCtx(agent),
    );
    assert.deepEqual(JSON.parse(out.content), { method: 'POST', body: 'data' });
  });

  it('follows redirects and re-checks every hop', async () => {
    const ok = await webFetchTool(fakeDeps({ config: allowLocal })).execute({ url: `${base}/redirect-local` }, toolCtx(agent));
    assert.deepEqual(JSON.parse(ok.content), { method: 'GET', body: '' });
    const blocked = await webFetchTool(fakeDeps({ config: allowLocal })).execute({ url: `${base}/redirect-blocked` }, toolCtx(agent));
    assert.equal(blocked.isError, true);
    assert.match(blocked.content, /::1 is a loopback address/);
  });

  it('caps the text at max_chars and reports HTTP errors as error results', async () => {
    const small = config({ web: { allow_cidrs: ['127.0.0.1/32'], max_chars: 50 } });
    const out = await webFetchTool(fakeDeps({ config: small })).execute({ url: `${base}/big` }, toolCtx(agent));
    assert.match(out.content, /^z{50}\n\n\.\.\. \[truncated: 200 characters in total, showing 50\]$/);
    const missing = await webFetchTool(fakeDeps({ config: allowLocal })).execute({ url: `${base}/nope` }, toolCtx(agent));
    assert.equal(missing.isError, true);
    assert.match(missing.content, /^HTTP 404/);
  });

  it("enforces the manifest's capabilities.network globs", async () => {
    const tool = webFetchTool(fakeDeps({ config: allowLocal }));
    const none = await tool.execute({ url: `${base}/json` }, toolCtx(agentRecord()));
    assert.match(none.content, /capabilities\.network is empty/);
    const other = await tool.execute({ url: `${base}/json` }, toolCtx(agentRecord({ capabilities: { network: ['*.example.com'] } })));
    assert.match(other.content, /host '127\.0\.0\.1' is not permitted/);
    const byPort = await tool.execute({ url: `${base}/json` }, toolCtx(agentRecord({ capabilities: { network: [`127.0.0.1:${port}`] } })));
    assert.equal(byPort.isError, false);
  });

  it('times out on a server that never finishes, and stops when the turn is aborted', async () => {
    const quick = config({ web: { allow_cidrs: ['127.0.0.1/32'], timeout_secs: 1 } });
    const out = await webFetchTool(fakeDeps({ config: quick })).execute({ url: `${base}/hang` }, toolCtx(agent));
    assert.deepEqual(out, { content: 'Fetch timed out after 1 seconds', isError: true });
    const ctx = toolCtx(agent);
    setTimeout(() => ctx.controller.abort(), 100);
    const aborted = await webFetchTool(fakeDeps({ config: allowLocal })).execute({ url: `${base}/hang` }, ctx);
    assert.deepEqual(aborted, { content: 'Fetch aborted: the turn was stopped', isError: true });
  });

  it('rejects non-http schemes and bad URLs', async () => {
    const tool = webFetchTool(fakeDeps({ config: allowLocal }));
    assert.match((await tool.execute({ url: 'file:///etc/passwd' }, toolCtx(agent))).content, /unsupported URL scheme 'file:'/);
    assert.match((await tool.execute({ url: 'not a url' }, toolCtx(agent))).content, /Invalid URL/);
  });
});
