/**
 * A 200 that is not ntfy speaking (here a proxy's sign-in page): the subscription never counts as connected and backs
 * off with a last_error naming the content type and first bytes; a publish so answered is a transient platform error
 * saying the same, never a raw parse error.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { channelKit, type AdapterContext, type ChannelKit } from '@talon/channels';
import type { NetFetch } from '@talon/net';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { ntfyAdapter } from '../services/adapter.ts';

const PAGE = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>proxy login</body></html>\n';

let k: TestKernel;
let page: http.Server;
let pageUrl: string;
const hits: string[] = [];
before(async () => {
  k = await startTestKernel({ only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-ntfy'] });
  page = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
});
after(async () => {
  page?.closeAllConnections();
  await new Promise((resolve) => page?.close(resolve));
  await k?.stop();
});

test('a server that answers 200 with HTML: not connected, backing off with that last_error; a publish fails transient', async () => {
  const controller = new AbortController();
  const net = k.kernel.services.view<NetFetch>('net.fetch');
  const origin = new URL(pageUrl).host;
  const reports: string[] = [];
  const ctx: AdapterContext = {
    channel: 'ntfy',
    config: { server_url: pageUrl, topic: 'alpha' },
    secrets: { token: 'tk_answers000000000000000000000' },
    emit: async () => ({ duplicate: false }),
    report: (state, error) => void reports.push(`${state}${error ? `: ${error}` : ''}`),
    fetch: (r) => net.fetch({ ...r, allowOrigins: [origin] }),
    allowOrigins: [origin],
    log: { info() {}, warn() {}, error() {} },
    signal: controller.signal,
  };
  const adapter = ntfyAdapter(k.kernel.services.view<ChannelKit>(channelKit.id), (url, init, policy) => net.webFetch(url, init, policy), {
    get: async () => undefined,
    set: async () => undefined,
  });
  const conn = await adapter.start(ctx);
  try {
    await waitFor(
      () => reports.some((r) => /^connecting: ntfy subscription: HTTP 200 .*text\/html.*begins "<!DOCTYPE html>/.test(r)),
      10_000,
      'the last_error',
    );
    const err = await conn.send({ chatId: 'alpha', text: 'hi', plain: 'hi', nonce: 'row-1' }).then(
      () => assert.fail('resolved'),
      (e: unknown) => e as Error & { kind?: string },
    );
    assert.equal(err.name, 'ChannelError');
    assert.equal(err.kind, 'transient');
    assert.match(err.message, /^ntfy publish: HTTP 200 .*content-type text\/html; charset=utf-8.*begins "<!DOCTYPE html> <html><head><title>Sign in/);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.ok(!reports.includes('connected'), reports.join('\n'));
    const subscriptions = hits.filter((h) => h.startsWith('GET /alpha/json')).length;
    // Backoff doubling from 1 s: a handful of attempts in about 3 s.
    assert.ok(subscriptions <= 6, `${subscriptions} subscriptions`);
  } finally {
    controller.abort();
    await conn.stop();
  }
});
