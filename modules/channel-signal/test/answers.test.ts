/**
 * A 200 that is not the daemon speaking (here a proxy's sign-in page): a call fails as a transient platform error
 * naming the content type and first bytes, never a raw parse error; an event stream answered so is not connected and
 * backs off with that last_error; a message whose attachment read gets such an answer is retried with backoff, shown
 * as last_error, and delivered once the daemon answers again.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { channelKit, type AdapterContext, type ChannelKit, type InboundMessage } from '@talon/channels';
import type { NetFetch } from '@talon/net';
import { startSignalFake, startTestKernel, waitFor, type SignalFake, type TestKernel } from '@talon/testing';
import { signalAdapter } from '../services/adapter.ts';
import { readEvents } from '../services/events.ts';
import { signalRpc, type SignalRpc } from '../services/rpc.ts';
import { MODULES, person } from './helpers.ts';

const PAGE = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>proxy login</body></html>';

describe('answers that are not the daemon’s', () => {
  let k: TestKernel;
  let kit: ChannelKit;
  let net: NetFetch;
  let page: http.Server;
  let pageUrl: string;
  let hits: string[];
  before(async () => {
    k = await startTestKernel({ only: MODULES });
    kit = k.kernel.services.view<ChannelKit>(channelKit.id);
    net = k.kernel.services.view<NetFetch>('net.fetch');
    hits = [];
    page = http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
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

  function contextFor(apiUrl: string, reports: string[], emit: AdapterContext['emit'], signal: AbortSignal): AdapterContext {
    const origins = [new URL(apiUrl).host, new URL(pageUrl).host];
    return {
      channel: 'signal',
      config: { api_url: apiUrl, number: '+15550000001' },
      secrets: { token: 'proxy-token-0000' },
      emit,
      report: (state, error) => void reports.push(`${state}${error ? `: ${error}` : ''}`),
      fetch: (r) => net.fetch({ ...r, allowOrigins: origins }),
      allowOrigins: origins,
      log: { info() {}, warn() {}, error() {} },
      signal,
    };
  }

  it('a call answered 200 with HTML is a transient error naming the content type and first bytes', async () => {
    const ctx = contextFor(pageUrl, [], async () => ({ duplicate: false }), new AbortController().signal);
    const err = await signalRpc(ctx, pageUrl, '+15550000001', 'proxy-token-0000')
      .call('version', {})
      .then(
        () => assert.fail('resolved'),
        (e: unknown) => e as Error & { kind?: string },
      );
    assert.equal(err.name, 'ChannelError');
    assert.equal(err.kind, 'transient');
    assert.match(err.message, /signal-cli version: HTTP 200 .*content-type text\/html; charset=utf-8.*begins "<!DOCTYPE html> <html><head><title>Sign in/);
  });

  it('an event stream answered 200 with HTML never counts as connected: it backs off with that last_error', async () => {
    const controller = new AbortController();
    const reports: string[] = [];
    const adapter = signalAdapter(
      () => kit,
      (url, init, policy) => net.webFetch(url, init, policy),
    );
    const before = hits.filter((h) => h.startsWith('GET /api/v1/events')).length;
    const conn = await adapter.start(contextFor(pageUrl, reports, async () => ({ duplicate: false }), controller.signal));
    try {
      await waitFor(() => reports.some((r) => /^connecting: signal-cli events: HTTP 200 .*text\/html.*<!DOCTYPE html>/.test(r)), 10_000, 'the last_error');
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const streams = hits.filter((h) => h.startsWith('GET /api/v1/events')).length - before;
      assert.ok(!reports.includes('connected'), reports.join('\n'));
      // Backoff doubling from 1 s: about four attempts in 3 s, where a loop reset by each 200 makes one every ~0.5 s.
      assert.ok(streams <= 6, `${streams} subscriptions in about 3 s`);
    } finally {
      controller.abort();
      await conn.stop();
    }
  });

  it('a message whose attachment read is answered with HTML is retried with backoff, shown, then delivered', async () => {
    const fake: SignalFake = await startSignalFake();
    const controller = new AbortController();
    const reports: string[] = [];
    const emitted: InboundMessage[] = [];
    const ctx = contextFor(fake.url, reports, async (m) => (emitted.push(m), { duplicate: false }), controller.signal);
    const daemon = signalRpc(ctx, fake.url, fake.number, undefined);
    const proxy = signalRpc(ctx, pageUrl, fake.number, undefined);
    let wrong = 2;
    const attempts: number[] = [];
    // The first two attachment reads meet the sign-in page, then the daemon answers.
    const rpc: SignalRpc = {
      call: (method, params, signal) => {
        if (method !== 'getAttachment') return daemon.call(method, params, signal);
        attempts.push(Date.now());
        return (wrong-- > 0 ? proxy : daemon).call(method, params, signal);
      },
    };
    const link = { ready() {}, traffic() {}, signal: controller.signal };
    const reading = readEvents(link, { ctx, kit, rpc, stream: (url, init, policy) => net.webFetch(url, init, policy), root: fake.url, number: fake.number });
    reading.catch(() => undefined);
    try {
      await waitFor(() => fake.streams === 1, 5_000, 'the stream');
      fake.dm(person(1), 'see the file', { attachments: [{ mediaType: 'text/plain', name: 'a.txt', data: Buffer.from('hello') }] });
      await waitFor(() => emitted.length === 1, 15_000, 'the message once the daemon answers');
      assert.equal(emitted[0]!.media?.[0]?.data, Buffer.from('hello').toString('base64'));
      assert.equal(attempts.length, 3);
      assert.ok(attempts[2]! - attempts[0]! >= 200, 'the retries waited');
      assert.match(
        reports.find((r) => r.startsWith('connecting'))!,
        /not committed yet: signal-cli getAttachment: HTTP 200 .*text\/html/,
      );
      assert.equal(reports.at(-1), 'connected');
    } finally {
      controller.abort();
      await reading.catch(() => undefined);
      await fake.stop();
    }
  });
});
