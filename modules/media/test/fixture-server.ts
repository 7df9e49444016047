/**
 * The provider side of the test driver 'fixture' (test/fixtures/modules/media-fixture): image answers are URLs on this
 * server (downloaded by the driver through the kit), speech a 1 s 22.05 kHz WAV, music a 2 s 16 kHz WAV,
 * transcription {text}, video a task done on its second poll. failNext() makes the next request fail the way a
 * provider does; every request is recorded with its headers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MEDIA_FAKE_REFUSAL, sampleMp4, samplePng, sampleWav, type MediaFake } from '@talon/testing';

export interface FixtureRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface FixtureServer extends MediaFake {
  requests: FixtureRequest[];
  /** What the next image answer's URLs are (default: this server's PNGs). */
  imageUrls?: (base: string) => string[];
  /** What the speech answers are (default: a 1 s 22.05 kHz WAV). */
  speechBytes?: () => Buffer;
  /** Delay of the next answer, in ms (a slow provider). */
  delayNext(ms: number): void;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  let fail: 'refuse' | 'outage' | 'rate_limit' | undefined;
  let delay = 0;
  const polls = new Map<string, number>();
  const server: FixtureServer = {
    url: '',
    requests: [],
    failNext: (mode) => void (fail = mode),
    delayNext: (ms) => void (delay = ms),
    stop: async () => undefined,
  };
  const listener = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    server.requests.push({ method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body: Buffer.concat(chunks) });
    // Taken at once: a request that arrives while the slow one waits is not slowed too.
    const wait = delay;
    delay = 0;
    if (wait) await new Promise((r) => setTimeout(r, wait));
    const mode = url.pathname.startsWith('/files/') ? undefined : fail;
    if (mode) {
      fail = undefined;
      if (mode === 'refuse') return sendJson(res, 400, { error: { message: MEDIA_FAKE_REFUSAL } });
      if (mode === 'outage') return sendJson(res, 503, { error: { message: 'the fixture is down' } });
      return sendJson(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '7' });
    }
    answer(server, polls, res, url);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  server.url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  server.stop = () =>
    new Promise<void>((resolve) => {
      listener.closeAllConnections();
      listener.close(() => resolve());
    });
  return server;
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function send(res: http.ServerResponse, type: string, bytes: Buffer): void {
  res.writeHead(200, { 'content-type': type, 'content-length': bytes.length });
  res.end(bytes);
}

function answer(server: FixtureServer, polls: Map<string, number>, res: http.ServerResponse, url: URL): void {
  const path = url.pathname;
  const body = server.requests.at(-1)!.body;
  if (path === '/image') {
    const n = Number((JSON.parse(body.toString()) as { n?: number }).n ?? 1);
    const urls = server.imageUrls?.(server.url) ?? Array.from({ length: n }, (_, i) => `${server.url}/files/image-${i}.png`);
    return sendJson(res, 200, { urls, model: 'fixture-image', revised: 'a revised prompt' });
  }
  if (path.startsWith('/files/image-')) return send(res, 'application/octet-stream', samplePng(8, 8, Number(path.match(/\d+/)?.[0] ?? 0)));
  if (path === '/files/page.html') return send(res, 'image/png', Buffer.from('<!doctype html><html><body>not an image</body></html>'));
  if (path === '/files/big.png') return send(res, 'image/png', Buffer.concat([samplePng(), Buffer.alloc(70_000)]));
  if (path === '/files/sample.mp4') return send(res, 'video/mp4', sampleMp4());
  if (path === '/speech') return send(res, 'audio/mpeg', server.speechBytes?.() ?? sampleWav(1, 22050));
  if (path === '/music') return send(res, 'audio/wav', sampleWav(2, 16000));
  if (path === '/transcribe') return sendJson(res, 200, { text: `heard ${body.length} bytes of ${url.searchParams.get('type')}` });
  if (path === '/video') return sendJson(res, 200, { id: `task/${polls.size + 1}?x=1` });
  if (path.startsWith('/video/')) {
    const id = decodeURIComponent(path.slice('/video/'.length));
    const n = (polls.get(id) ?? 0) + 1;
    polls.set(id, n);
    return sendJson(res, 200, n < 2 ? { status: 'running' } : { status: 'done', url: `${server.url}/files/sample.mp4` });
  }
  sendJson(res, 404, { error: { message: `no route ${path}` } });
}
