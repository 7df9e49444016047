import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedBuckets, RateLimitedError, retryAfterMs, SendLimiter } from '../kit/bucket.ts';
import { FakeTimers, settle } from './kit-fake-timers.ts';

test('a bucket allows its burst, then one token per refill interval', () => {
  const timers = new FakeTimers();
  const b = new KeyedBuckets({ capacity: 3, perSecond: 1 }, timers);
  for (let i = 0; i < 3; i++) {
    assert.equal(b.waitFor('k'), 0);
    b.take('k');
  }
  assert.equal(b.waitFor('k'), 1000);
});

test('idle keys are dropped, so the map does not grow with every chat ever seen', async () => {
  const timers = new FakeTimers();
  const b = new KeyedBuckets({ capacity: 1, perSecond: 1 }, timers, { idleMs: 60_000 });
  for (let i = 0; i < 500; i++) b.take(`chat-${i}`);
  assert.equal(b.size, 500);
  await timers.advance(60_000);
  b.take('fresh');
  assert.equal(b.size, 1);
});

test('a paused key is kept even when idle, so its pause is not forgotten', async () => {
  const timers = new FakeTimers();
  const b = new KeyedBuckets({ capacity: 1, perSecond: 1 }, timers, { idleMs: 1000 });
  b.pause('slow', 120_000);
  await timers.advance(5000);
  b.take('other');
  assert.equal(b.size, 2);
  assert.equal(b.waitFor('slow'), 115_000);
});

test('past maxKeys the least recently used key goes', () => {
  const b = new KeyedBuckets({ capacity: 1, perSecond: 1 }, new FakeTimers(), { maxKeys: 3 });
  for (const k of ['a', 'b', 'c']) b.take(k);
  b.waitFor('a');
  b.take('d');
  assert.equal(b.size, 3);
  assert.equal(b.waitFor('b'), 0, "'b' was dropped and starts full again");
  assert.equal(b.waitFor('a'), 1000, "'a' was kept");
});

test('the limiter waits for both the account and the chat bucket', async () => {
  const timers = new FakeTimers();
  const l = new SendLimiter({ account: { capacity: 30, perSecond: 30 }, chat: { capacity: 1, perSecond: 1 }, timers });
  const sent: Array<[string, number]> = [];
  const send = async (chat: string) => {
    await l.acquire('bot', chat);
    sent.push([chat, timers.now()]);
  };
  const all = Promise.all([send('a'), send('a'), send('a'), send('b')]);
  await timers.advance(3000);
  await all;
  assert.deepEqual(
    sent.sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0])),
    [
      ['a', 0],
      ['b', 0],
      ['a', 1000],
      ['a', 2000],
    ],
  );
});

test('the account bucket bounds all chats together', async () => {
  const timers = new FakeTimers();
  const l = new SendLimiter({ account: { capacity: 2, perSecond: 2 }, chat: { capacity: 5, perSecond: 5 }, timers });
  let done = 0;
  for (let i = 0; i < 6; i++) void l.acquire('bot', `chat-${i}`).then(() => done++);
  await settle();
  assert.equal(done, 2);
  await timers.advance(1000);
  assert.equal(done, 4);
  await timers.advance(1000);
  assert.equal(done, 6);
});

test("a 429's retry_after pauses the chat (or the account) without using a token", async () => {
  const timers = new FakeTimers();
  const l = new SendLimiter({ account: { capacity: 10, perSecond: 10 }, chat: { capacity: 10, perSecond: 10 }, timers });
  l.retryAfter(5000, 'bot', 'a');
  let aAt = -1;
  let bAt = -1;
  void l.acquire('bot', 'a').then(() => (aAt = timers.now()));
  void l.acquire('bot', 'b').then(() => (bAt = timers.now()));
  await timers.advance(6000);
  assert.equal(bAt, 0, 'another chat is not held');
  assert.equal(aAt, 5000);
  l.retryAfter(2000, 'bot');
  let cAt = -1;
  void l.acquire('bot', 'c').then(() => (cAt = timers.now()));
  await timers.advance(3000);
  assert.equal(cAt, 8000, 'an account-wide 429 holds every chat');
});

test('acquire gives up when its signal aborts', async () => {
  const timers = new FakeTimers();
  const l = new SendLimiter({ account: { capacity: 1, perSecond: 1 }, chat: { capacity: 1, perSecond: 1 }, timers });
  l.retryAfter(60_000, 'bot');
  const ac = new AbortController();
  const p = l.acquire('bot', 'x', ac.signal);
  ac.abort(new Error('stopping'));
  await assert.rejects(p, /stopping/);
  assert.equal(timers.pending, 0);
});

test('retry_after is read from a body number or a Retry-After header', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(retryAfterMs(490, now), 490_000);
  assert.equal(retryAfterMs(0.25, now), 250);
  assert.equal(retryAfterMs('7', now), 7000);
  assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
  assert.equal(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now), 0);
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(-1, now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);
  const e = new RateLimitedError(3000, '42');
  assert.equal(e.retryAfterMs, 3000);
  assert.equal(e.chat, '42');
});
