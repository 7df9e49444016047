import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypingController, withTyping, type TypingIndicator } from '../kit/typing.ts';
import { FakeTimers, settle } from './kit-fake-timers.ts';

function recorder(timers: FakeTimers, opts: { stop?: boolean; failStart?: boolean } = {}) {
  const calls: string[] = [];
  const indicator: TypingIndicator = {
    start: async () => {
      calls.push(`start@${timers.now()}`);
      if (opts.failStart) throw new Error('chat action refused');
    },
    ...(opts.stop === false ? {} : { stop: async () => void calls.push(`stop@${timers.now()}`) }),
  };
  return { calls, indicator };
}

/** A turn that ends when the test says so. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

test('the indicator is refreshed while the turn runs and stopped when it ends', async () => {
  const timers = new FakeTimers();
  const { calls, indicator } = recorder(timers);
  const turn = deferred<string>();
  const done = withTyping(indicator, { refreshMs: 5000, timers }, () => turn.promise);
  await timers.advance(12_000);
  turn.resolve('answer');
  assert.equal(await done, 'answer');
  assert.deepEqual(calls, ['start@0', 'start@5000', 'start@10000', 'stop@12000']);
  await timers.advance(60_000);
  assert.equal(calls.length, 4, 'no refresh after the turn');
  assert.equal(timers.pending, 0);
});

test('a turn that throws still stops the indicator', async () => {
  const timers = new FakeTimers();
  const { calls, indicator } = recorder(timers);
  const turn = deferred<never>();
  const done = withTyping(indicator, { refreshMs: 5000, timers }, () => turn.promise);
  await timers.advance(6000);
  turn.reject(new Error('model failed'));
  await assert.rejects(done, /model failed/);
  assert.deepEqual(calls, ['start@0', 'start@5000', 'stop@6000']);
  await timers.advance(60_000);
  assert.equal(timers.pending, 0);
});

test('an aborted turn stops the indicator at once, even before the turn returns', async () => {
  const timers = new FakeTimers();
  const { calls, indicator } = recorder(timers);
  const ac = new AbortController();
  const turn = deferred<void>();
  const done = withTyping(indicator, { refreshMs: 5000, timers, signal: ac.signal }, () => turn.promise);
  await timers.advance(1000);
  ac.abort();
  await settle();
  assert.deepEqual(calls, ['start@0', 'stop@1000']);
  await timers.advance(30_000);
  assert.equal(calls.length, 2, 'no refresh while the aborted turn winds down');
  turn.resolve();
  await done;
  assert.equal(calls.length, 2, 'stopped once');
});

test('an indicator that fails never fails the turn, and a platform without a stop call just stops refreshing', async () => {
  const timers = new FakeTimers();
  const errors: unknown[] = [];
  const { calls, indicator } = recorder(timers, { failStart: true, stop: false });
  const turn = deferred<number>();
  const done = withTyping(indicator, { refreshMs: 4000, timers, onError: (e) => errors.push(e) }, () => turn.promise);
  await timers.advance(8000);
  turn.resolve(7);
  assert.equal(await done, 7);
  assert.equal(errors.length, 3);
  await timers.advance(20_000);
  assert.deepEqual(calls, ['start@0', 'start@4000', 'start@8000']);
});

test('stop waits for a start already sent, so a slow start cannot land after the stop', async () => {
  const timers = new FakeTimers();
  const order: string[] = [];
  const slow = deferred<void>();
  const typing = new TypingController(
    {
      start: async () => {
        order.push('start sent');
        await slow.promise;
        order.push('start answered');
      },
      stop: async () => void order.push('stop'),
    },
    { refreshMs: 5000, timers },
  );
  typing.start();
  await settle();
  const stopped = typing.stop();
  await settle();
  assert.deepEqual(order, ['start sent']);
  slow.resolve();
  await stopped;
  assert.deepEqual(order, ['start sent', 'start answered', 'stop']);
  assert.equal(typing.active, false);
});

test('a start not yet sent when the turn stops is never sent', async () => {
  const timers = new FakeTimers();
  const { calls, indicator } = recorder(timers);
  const typing = new TypingController(indicator, { refreshMs: 5000, timers });
  typing.start();
  await typing.stop();
  assert.deepEqual(calls, ['stop@0']);
});

test('a turn past maxMs stops refreshing anyway', async () => {
  const timers = new FakeTimers();
  const { calls, indicator } = recorder(timers);
  const typing = new TypingController(indicator, { refreshMs: 5000, maxMs: 12_000, timers });
  typing.start();
  await timers.advance(60_000);
  assert.deepEqual(calls, ['start@0', 'start@5000', 'start@10000', 'stop@15000']);
  assert.equal(typing.active, false);
});
