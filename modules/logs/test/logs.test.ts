import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

let k: TestKernel;
before(async () => {
  // debug: the stream logs when it ends, with the request id (request-id puts it in a header).
  k = await startTestKernel({ only: ['logs', 'error-envelope', 'request-id'], config: 'log_level = "debug"\n' });
});
after(() => k?.stop());

interface SseEvent {
  event?: string;
  data: string;
}

/** Reads SSE events from a fetch body until one matches. */
async function nextEvent(reader: ReadableStreamDefaultReader<Uint8Array>, state: { buffer: string }, match: (e: SseEvent) => boolean): Promise<SseEvent> {
  const decoder = new TextDecoder();
  for (;;) {
    let cut: number;
    while ((cut = state.buffer.indexOf('\n\n')) >= 0) {
      const block = state.buffer.slice(0, cut);
      state.buffer = state.buffer.slice(cut + 2);
      const lines = block.split('\n');
      if (lines.every((l) => l.startsWith(':'))) continue;
      const event: SseEvent = {
        event: lines.find((l) => l.startsWith('event: '))?.slice(7),
        data: lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n'),
      };
      if (match(event)) return event;
    }
    const { value, done } = await reader.read();
    if (done) throw new Error('stream ended');
    state.buffer += decoder.decode(value, { stream: true });
  }
}

/** The `log stream closed` line of the stream a request opened: how many subscribers were left. */
const closedLine = (requestId: string | null) =>
  k
    .logLines()
    .map((l) => JSON.parse(l) as { msg?: string; reqId?: string; subscribers?: number })
    .find((l) => l.msg === 'log stream closed' && l.reqId === requestId);

test('a line logged after subscribing arrives as a `log` event with the JSON line', async () => {
  const controller = new AbortController();
  const res = await k.request('/api/logs/stream', { signal: controller.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  const state = { buffer: '' };
  k.kernel.log.info({ probe: 42 }, 'probe line');
  const event = await nextEvent(reader, state, (e) => e.data.includes('probe line'));
  assert.equal(event.event, 'log');
  const line = JSON.parse(event.data) as { msg: string; probe: number; level: number };
  assert.equal(line.msg, 'probe line');
  assert.equal(line.probe, 42);
  assert.equal(line.level, 30);
  // The client goes away: the subscription ends.
  controller.abort();
  const closed = await waitFor(() => closedLine(res.headers.get('x-request-id')), 3000, 'the stream to close');
  assert.ok(closed);
  assert.equal(closed.subscribers, 0);
});

test('?level=warn sends only warn and above; an unknown level is 400', async () => {
  const controller = new AbortController();
  const res = await k.request('/api/logs/stream?level=warn', { signal: controller.signal });
  const reader = res.body!.getReader();
  k.kernel.log.info('quiet info');
  k.kernel.log.warn('loud warning');
  const first = await nextEvent(reader, { buffer: '' }, (e) => e.event === 'log');
  assert.equal((JSON.parse(first.data) as { msg: string }).msg, 'loud warning');
  controller.abort();

  const bad = await k.request('/api/logs/stream?level=loud');
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: string }).error, /^querystring\/level must be equal to one of the allowed values/);
});

test('unloading the module ends open streams; the next copy streams', async () => {
  const res = await k.request('/api/logs/stream');
  // Subscribed once the headers arrived: the route subscribes in the same tick as it sends them.
  const reader = res.body!.getReader();
  const result = await k.kernel.reloadModule('logs');
  assert.ok(result.ok, result.error);
  await k.kernel.settled();
  // Read to the end: the old copy closed the stream.
  for (;;) {
    const { done } = await reader.read();
    if (done) break;
  }
  const controller = new AbortController();
  const next = await k.request('/api/logs/stream', { signal: controller.signal });
  const state = { buffer: '' };
  k.kernel.log.info('after the reload');
  await nextEvent(next.body!.getReader(), state, (e) => e.data.includes('after the reload'));
  controller.abort();
});

/** The `log` events a stream sends until one matches `last`, as parsed records. */
async function collect(path: string, last: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>[]> {
  const controller = new AbortController();
  const res = await k.request(path, { signal: controller.signal });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const state = { buffer: '' };
  const records: Record<string, unknown>[] = [];
  try {
    for (;;) {
      const event = await nextEvent(reader, state, (e) => e.event === 'log');
      const record = JSON.parse(event.data) as Record<string, unknown>;
      records.push(record);
      if (last(record)) return records;
    }
  } finally {
    controller.abort();
  }
}

test('?backlog=N sends the latest N lines that pass the filters before the live ones', async () => {
  for (let i = 0; i < 5; i++) k.kernel.log.info({ seq: i }, 'backlog probe');
  const child = k.kernel.log.child({ module: 'probe-module' });
  child.warn('a probe warning');
  child.info('a probe info');
  const marker = 'live after backlog';
  // The backlog: the last 3 probe lines, oldest first, then the live line.
  const records = await collect(`/api/logs/stream?backlog=3&q=probe`, (r) => {
    if (r.msg === 'a probe info') queueMicrotask(() => k.kernel.log.info(`probe: ${marker}`));
    return r.msg === `probe: ${marker}`;
  });
  assert.deepEqual(
    records.map((r) => r.msg),
    ['backlog probe', 'a probe warning', 'a probe info', `probe: ${marker}`],
  );
  assert.equal(records[0].seq, 4);
  // Filters apply to the backlog: by module, by level, by text (case-insensitive).
  const byModule = await collect('/api/logs/stream?backlog=10&module=probe-module', (r) => r.msg === 'a probe info');
  assert.deepEqual(
    byModule.map((r) => r.msg),
    ['a probe warning', 'a probe info'],
  );
  const byLevel = await collect('/api/logs/stream?backlog=1&level=warn&q=PROBE', () => true);
  assert.deepEqual(
    byLevel.map((r) => r.msg),
    ['a probe warning'],
  );
});

test('a refused request: its access line carries the status, the error, the route module and the request id', async () => {
  const res = await k.request('/api/logs/stream?backlog=-1');
  assert.equal(res.status, 400);
  const { error } = (await res.json()) as { error: string };
  assert.match(error, /backlog must be >= 0/);
  const id = res.headers.get('x-request-id')!;
  // Following the request id: every line of that request, the access line among them.
  const records = await collect(`/api/logs/stream?backlog=50&q=${id}`, (r) => r.msg === 'request completed');
  const access = records.at(-1)!;
  assert.deepEqual(
    { reqId: access.reqId, method: access.method, url: access.url, statusCode: access.statusCode, error: access.error, routeModule: access.routeModule },
    { reqId: id, method: 'GET', url: '/api/logs/stream?backlog=-1', statusCode: 400, error, routeModule: 'logs' },
  );
  assert.ok(records.every((r) => r.reqId === id));
  // A module filter finds the access lines of its routes.
  const answered = await collect(`/api/logs/stream?backlog=1&module=logs&q=${id}`, () => true);
  assert.equal(answered[0].reqId, id);
});
