import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, Reconnector, reportHealth, type ReconnectHealth, type ReconnectLink, type ReconnectOptions } from '../kit/backoff.ts';
import { FakeTimers, settle } from './kit-fake-timers.ts';

class AuthError extends Error {}

/** A scripted adapter: each connect() runs the next step (or the last one again) and records what happened. */
function harness(steps: Array<(link: ReconnectLink) => Promise<void>>, extra: Partial<ReconnectOptions> = {}) {
  const timers = new FakeTimers();
  const log: string[] = [];
  const starts: number[] = [];
  const controller = new AbortController();
  let n = 0;
  const r = new Reconnector({
    connect: (link) => {
      starts.push(timers.now());
      return steps[Math.min(n++, steps.length - 1)](link);
    },
    teardown: (reason) => {
      log.push(`teardown:${reason}`);
    },
    isAuthError: (e) => e instanceof AuthError,
    livenessMs: 60_000,
    timers,
    random: () => 1 - Number.EPSILON,
    signal: controller.signal,
    ...extra,
  });
  const done = r.run();
  return { r, timers, log, starts, controller, done, connects: () => n };
}

const fail =
  (msg = 'ECONNRESET') =>
  () =>
    Promise.reject(new Error(msg));
const never = () => new Promise<void>(() => undefined);

test('full jitter: a uniform wait below min(cap, base·2^attempt)', () => {
  assert.equal(
    backoffDelay(0, 1000, 30_000, () => 0),
    0,
  );
  assert.equal(
    backoffDelay(0, 1000, 30_000, () => 0.5),
    500,
  );
  assert.equal(
    backoffDelay(3, 1000, 30_000, () => 0.5),
    4000,
  );
  assert.equal(
    backoffDelay(20, 1000, 30_000, () => 0.999),
    29_970,
  );
});

test('transient errors are retried for ever, the wait doubling up to 30 s', async () => {
  const h = harness([fail()]);
  await h.timers.advance(30 * 60_000);
  assert.ok(h.connects() > 60, `${h.connects()} connects in 30 minutes`);
  const gaps = h.starts.slice(1).map((t, i) => t - h.starts[i]);
  assert.deepEqual(gaps.slice(0, 6), [999, 1999, 3999, 7999, 15_999, 29_999]);
  assert.ok(gaps.every((g) => g < 30_000));
  assert.equal(h.r.status.state, 'waiting');
  assert.equal(h.r.status.lastError, 'ECONNRESET');
  assert.equal(h.log.length, h.connects(), 'every failed connection is torn down');
  h.controller.abort();
  assert.equal((await h.done).state, 'aborted');
});

test('an auth error stops the loop with last_error, after tearing the connection down', async () => {
  const h = harness([fail(), () => Promise.reject(new AuthError('401 Unauthorized'))]);
  await h.timers.advance(5000);
  const final = await h.done;
  assert.equal(final.state, 'stopped');
  assert.equal(final.lastError, '401 Unauthorized');
  assert.equal(h.connects(), 2);
  assert.deepEqual(h.log, ['teardown:error', 'teardown:error']);
});

test('describe redacts what an error carries into last_error', async () => {
  const h = harness([() => Promise.reject(new AuthError('GET /bot123:SECRET/getMe 401'))], {
    describe: (e) => String((e as Error).message).replace(/bot[^/]+/, 'bot<token>'),
  });
  assert.equal((await h.done).lastError, 'GET /bot<token>/getMe 401');
});

test('the counter resets on the platform ready signal, not when a connection merely opens', async () => {
  // Opens (connect is running) then drops before READY: the wait keeps growing.
  const h = harness([fail(), fail(), fail(), (link) => (link.ready(), Promise.reject(new Error('dropped after READY'))), fail()]);
  await h.timers.advance(1000 + 2000 + 4000 + 1);
  assert.equal(h.connects(), 4);
  assert.equal(h.r.status.attempt, 1, 'READY reset the counter; the drop after it is the first failure');
  await h.timers.advance(1000);
  assert.equal(h.connects(), 5, 'the next wait is the base one again');
  h.controller.abort();
  await h.done;
});

test('without the ready signal, a server that accepts and drops keeps the counter climbing', async () => {
  const h = harness([(link) => (link.traffic(), Promise.reject(new Error('dropped')))]);
  await h.timers.advance(1000 + 2000 + 4000 + 1);
  assert.equal(h.r.status.attempt, 4, 'four connections, four failures: traffic alone does not reset the counter');
  h.controller.abort();
  await h.done;
});

test('liveness: a connection with no application traffic is torn down and rebuilt', async () => {
  const h = harness([never, never], { livenessMs: 10_000 });
  await h.timers.advance(9_999);
  assert.deepEqual(h.log, []);
  await h.timers.advance(1);
  assert.deepEqual(h.log, ['teardown:dead']);
  assert.match(h.r.status.lastError ?? '', /no traffic for 10000 ms/);
  await h.timers.advance(1000);
  assert.equal(h.connects(), 2, 'reconnected');
  h.controller.abort();
  await h.done;
});

test('liveness: traffic keeps a connection alive, and the link is aborted when it is given up', async () => {
  let link: ReconnectLink | undefined;
  const h = harness(
    [
      (l) => {
        link = l;
        l.ready();
        return never();
      },
    ],
    { livenessMs: 10_000 },
  );
  for (let i = 0; i < 10; i++) {
    await h.timers.advance(9_000);
    link!.traffic();
  }
  assert.deepEqual(h.log, [], 'alive after 90 s of traffic');
  assert.equal(h.r.status.state, 'ready');
  await h.timers.advance(10_000);
  assert.deepEqual(h.log, ['teardown:dead']);
  assert.equal(link!.signal.aborted, true);
  h.controller.abort();
  await h.done;
});

test('abort stops the loop while connected and while waiting, tearing the connection down', async () => {
  const connected = harness([never]);
  await settle();
  connected.controller.abort();
  assert.equal((await connected.done).state, 'aborted');
  assert.deepEqual(connected.log, ['teardown:aborted']);
  assert.equal(connected.timers.pending, 0, 'no timer left behind');

  const waiting = harness([fail()]);
  await waiting.timers.advance(10);
  waiting.controller.abort();
  assert.equal((await waiting.done).state, 'aborted');
  assert.equal(waiting.timers.pending, 0);
});

test('a connect that throws synchronously is a transient failure like any other', async () => {
  const h = harness([
    () => {
      throw new Error('sync');
    },
  ]);
  await h.timers.advance(1);
  assert.equal(h.r.status.lastError, 'sync');
  h.controller.abort();
  await h.done;
});

test('reportHealth: connected on ready, connecting with the error while waiting, error when given up; each change once', () => {
  const reports: Array<[string, string | undefined]> = [];
  const onState = reportHealth({ report: (state, error) => void reports.push([state, error]) });
  const health = (state: ReconnectHealth['state'], lastError: string | null = null): ReconnectHealth => ({ state, attempt: 0, lastError, lastTrafficAt: null });
  for (const h of [
    health('connecting'),
    health('waiting', 'ECONNREFUSED'),
    health('waiting', 'ECONNREFUSED'),
    health('ready'),
    health('ready'),
    health('stopped', '401'),
  ])
    onState(h);
  assert.deepEqual(reports, [
    ['connecting', 'ECONNREFUSED'],
    ['connected', undefined],
    ['error', '401'],
  ]);
});
