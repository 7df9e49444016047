/**
 * The driver kit at unit level: provider HTTP (status mapping, the provider's reason, Retry-After, the size cap, the
 * time bound, keys only to the provider's own origin), downloads of provider-returned URLs (https only, the
 * configured origin's exemption, per-hop redirects, credentials only on the API origin), and the driver order.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NetFetch, NetStreamPolicy } from '@talon/net';
import type { MediaDriver, MediaError } from '@talon/media';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from './fixture-server.ts';
import { download } from '../services/kit/download.ts';
import { mediaErrorStatus } from '../services/kit/errors.ts';
import { providerRequest } from '../services/kit/request.ts';
import { orderDrivers } from '../services/drivers.ts';

async function rejection(promise: Promise<unknown>): Promise<MediaError> {
  try {
    await promise;
  } catch (err) {
    return err as MediaError;
  }
  assert.fail('expected a rejection');
}

describe('kit.request', () => {
  let server: http.Server;
  let port: number;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const status = Number(url.searchParams.get('status') ?? 200);
      if (url.pathname.endsWith('/slow')) return void setTimeout(() => sendJson(res, 200, {}), 2000);
      if (url.pathname.endsWith('/big')) return void res.end(Buffer.alloc(5000));
      const headers: Record<string, string> = url.searchParams.get('retry') ? { 'retry-after': url.searchParams.get('retry')! } : {};
      const message = status === 401 ? 'Incorrect API key provided: sk-secr****' : `reason ${status}`;
      sendJson(res, status, status === 200 ? { ok: true, auth: req.headers.authorization } : { error: { message } }, headers);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}/v1`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const call = (path: string, extra: { timeoutMs?: number; maxBytes?: number; baseUrl?: string } = {}) =>
    providerRequest(
      { apiKey: 'k', baseUrl: extra.baseUrl ?? base },
      {
        provider: 'p',
        url: `http://127.0.0.1:${port}${path}`,
        headers: { authorization: 'Bearer k' },
        timeoutMs: extra.timeoutMs ?? 2000,
        maxBytes: extra.maxBytes ?? 100_000,
        signal: new AbortController().signal,
      },
    );

  it('answers 2xx with the body and its JSON', async () => {
    const res = await call('/v1/ok');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { ok: true, auth: 'Bearer k' });
  });

  it('maps statuses to kinds: 400/422 refused with the reason, 401/403 not_configured without echoing the body, 429 with Retry-After, 5xx outage', async () => {
    const refused = await rejection(call('/v1/x?status=400'));
    assert.deepEqual([refused.name, refused.kind, refused.status, mediaErrorStatus(refused)], ['MediaError', 'refused', 400, 400]);
    assert.match(refused.message, /reason 400/);
    assert.equal((await rejection(call('/v1/x?status=422'))).kind, 'refused');
    const key = await rejection(call('/v1/x?status=401'));
    assert.deepEqual([key.kind, mediaErrorStatus(key)], ['not_configured', 422]);
    assert.doesNotMatch(key.message, /sk-secr/);
    assert.equal((await rejection(call('/v1/x?status=403'))).kind, 'not_configured');
    const limited = await rejection(call('/v1/x?status=429&retry=7'));
    assert.deepEqual([limited.kind, limited.retryAfterMs, mediaErrorStatus(limited)], ['rate_limited', 7000, 429]);
    const dated = await rejection(call(`/v1/x?status=429&retry=${encodeURIComponent(new Date(Date.now() + 60_000).toUTCString())}`));
    assert.ok(dated.retryAfterMs! > 55_000 && dated.retryAfterMs! <= 60_000, `a date's Retry-After: ${dated.retryAfterMs}`);
    const outage = await rejection(call('/v1/x?status=503'));
    assert.deepEqual([outage.kind, mediaErrorStatus(outage)], ['outage', 502]);
  });

  it('caps the answer, bounds the time, and sends nothing outside the provider base URL', async () => {
    assert.match((await rejection(call('/v1/big', { maxBytes: 1000 }))).message, /more than 1000 bytes/);
    const slow = await rejection(call('/v1/slow', { timeoutMs: 100 }));
    assert.deepEqual([slow.kind, /did not answer within/.test(slow.message)], ['outage', true]);
    const elsewhere = await rejection(call('/v1/ok', { baseUrl: 'https://api.example.com/v1' }));
    assert.match(elsewhere.message, /not the API of provider 'p'/);
  });

  it('never follows a redirect: the key stays on the API, and the 3xx is an outage naming the origin it pointed to', async () => {
    const elsewhere: http.IncomingHttpHeaders[] = [];
    const other = http.createServer((req, res) => {
      elsewhere.push(req.headers);
      sendJson(res, 200, { stolen: true });
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const redirecting = http.createServer((req, res) => {
      const to = req.url?.endsWith('/private') ? 'http://10.0.0.1/metadata' : `${target}/collect?secret=1`;
      res.writeHead(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 302), { location: to });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const apiBase = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/v1`;
    try {
      for (const [path, origin] of [
        ['/v1/x?status=302', target],
        ['/v1/x?status=307', target],
        ['/v1/private', 'http://10.0.0.1'],
      ] as const) {
        const err = await rejection(
          providerRequest(
            { baseUrl: apiBase },
            {
              provider: 'p',
              url: `${apiBase.replace('/v1', '')}${path}`,
              method: 'POST',
              headers: { 'x-goog-api-key': 'secret-key' },
              body: '{}',
              timeoutMs: 2000,
              maxBytes: 1000,
              signal: new AbortController().signal,
            },
          ),
        );
        assert.deepEqual([err.name, err.kind, mediaErrorStatus(err)], ['MediaError', 'outage', 502]);
        assert.match(err.message, new RegExp(`redirect \\(\\d{3}\\) to ${origin.replace(/\./g, '\\.')},`));
        assert.doesNotMatch(err.message, /collect|secret|metadata/);
      }
      assert.equal(elsewhere.length, 0, 'nothing reached the redirect target');
    } finally {
      for (const s of [other, redirecting]) {
        s.closeAllConnections();
        s.close();
      }
    }
  });

  it("the caller's abort passes through as it is", async () => {
    const controller = new AbortController();
    const pending = providerRequest({ baseUrl: base }, { provider: 'p', url: `${base}/../slow`, timeoutMs: 5000, maxBytes: 1000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const err = await rejection(pending);
    assert.equal(err.name, 'AbortError');
  });
});

interface Hop {
  url: string;
  headers: Record<string, string>;
  policy: NetStreamPolicy;
}

/** A net service whose answers the test writes per URL; it records every hop it was asked for. */
function stubNet(answers: Record<string, { status: number; location?: string; body?: string }>): { net: NetFetch; hops: Hop[] } {
  const hops: Hop[] = [];
  const net = {
    async webFetch(input: string | URL | Request, init: RequestInit | undefined, policy: NetStreamPolicy) {
      const url = String(input);
      hops.push({ url, headers: Object.fromEntries(new Headers(init?.headers)), policy });
      const answer = answers[url] ?? { status: 404 };
      return new Response(answer.body ?? null, { status: answer.status, headers: answer.location ? { location: answer.location } : {} });
    },
  } as unknown as NetFetch;
  return { net, hops };
}

describe('kit.download', () => {
  const target = { provider: 'p', maxBytes: 1000, timeoutMs: 1000, signal: new AbortController().signal };

  it('sends the credentials on the API origin only, never to a redirect target elsewhere; each hop is checked by net', async () => {
    const { net, hops } = stubNet({
      'https://api.example.com/files/1': { status: 302, location: 'https://cdn.example.net/blob/1' },
      'https://cdn.example.net/blob/1': { status: 200, body: 'video' },
    });
    const bytes = await download(net, {
      ...target,
      url: 'https://api.example.com/files/1',
      apiBase: 'https://api.example.com/v1',
      credentials: { 'x-api-key': 'secret' },
    });
    assert.equal(bytes.toString(), 'video');
    assert.deepEqual(
      hops.map((h) => [h.url, h.headers['x-api-key']]),
      [
        ['https://api.example.com/files/1', 'secret'],
        ['https://cdn.example.net/blob/1', undefined],
      ],
    );
    assert.ok(hops.every((h) => h.policy.maxRedirects === 0 && h.policy.allowOrigins?.length === 0));
  });

  it('refuses http, and a redirect from https down to http, unless it is the origin the operator configured', async () => {
    const { net, hops } = stubNet({ 'https://cdn.example.net/a': { status: 301, location: 'http://cdn.example.net/a' } });
    assert.match((await rejection(download(net, { ...target, url: 'http://cdn.example.net/a' }))).message, /only https/);
    assert.match((await rejection(download(net, { ...target, url: 'https://cdn.example.net/a' }))).message, /only https/);
    assert.equal(hops.length, 1);
    const local = stubNet({ 'http://127.0.0.1:9/v1/f': { status: 200, body: 'ok' } });
    const bytes = await download(local.net, { ...target, url: 'http://127.0.0.1:9/v1/f', configuredBase: 'http://127.0.0.1:9/v1' });
    assert.equal(bytes.toString(), 'ok');
    assert.deepEqual(local.hops[0].policy.allowOrigins, ['127.0.0.1:9']);
  });

  it('follows at most 3 redirects; a non-200 is an outage naming the status', async () => {
    const loop = stubNet({ 'https://a.example/x': { status: 302, location: 'https://a.example/x' } });
    assert.match((await rejection(download(loop.net, { ...target, url: 'https://a.example/x' }))).message, /more than 3 redirects/);
    assert.equal(loop.hops.length, 4);
    const missing = stubNet({});
    const err = await rejection(download(missing.net, { ...target, url: 'https://a.example/gone' }));
    assert.deepEqual([err.kind, err.status], ['outage', 404]);
  });

  it("a net refusal (SSRF, size) becomes an outage with net's reason", async () => {
    const net = {
      webFetch: async () => {
        throw Object.assign(new Error("SSRF protection: blocked request to '10.0.0.1': private"), { name: 'FetchRefused' });
      },
    } as unknown as NetFetch;
    const err = await rejection(download(net, { ...target, url: 'https://10.0.0.1/x' }));
    assert.deepEqual([err.kind, /SSRF protection/.test(err.message)], ['outage', true]);
  });
});

describe('driver order', () => {
  const driver = (name: string) => ({ name }) as MediaDriver;
  const names = (list: MediaDriver[]) => list.map((d) => d.name);

  it('provider_order first, then the catalogue order, then the rest by name, local last', () => {
    const drivers = ['local', 'zeta', 'minimax', 'openai', 'alpha', 'gemini'].map(driver);
    assert.deepEqual(names(orderDrivers(drivers, [], ['openai', 'gemini', 'minimax'])), ['openai', 'gemini', 'minimax', 'alpha', 'zeta', 'local']);
    assert.deepEqual(names(orderDrivers(drivers, ['local', 'minimax'], ['openai', 'gemini', 'minimax'])), [
      'local',
      'minimax',
      'openai',
      'gemini',
      'alpha',
      'zeta',
    ]);
  });
});
