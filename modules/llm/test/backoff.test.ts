import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, sleep } from '../services/backoff.ts';
import { retryAfterMs } from '../services/errors.ts';

describe('backoff', () => {
  const opts = { baseMs: 2000, maxMs: 60000 };
  it('doubles from the base, caps at the max, adds up to 50 % jitter', () => {
    assert.deepEqual(
      [1, 2, 3, 6, 10].map((n) => backoffDelay(n, { ...opts, random: () => 0 })),
      [2000, 4000, 8000, 60000, 60000],
    );
    assert.equal(backoffDelay(2, { ...opts, random: () => 0.75 }), 5500);
  });
  it('uses Retry-After as a floor, capped at 300 s', () => {
    assert.equal(backoffDelay(1, { ...opts, retryAfterMs: 10_000, random: () => 0 }), 10_000);
    assert.equal(backoffDelay(1, { ...opts, retryAfterMs: 3_600_000, random: () => 0 }), 300_000);
  });
  it('reads Retry-After seconds and HTTP dates', () => {
    assert.equal(retryAfterMs('2'), 2000);
    assert.equal(retryAfterMs(undefined), undefined);
    assert.equal(retryAfterMs('soon'), undefined);
    const inFive = new Date(Date.now() + 5000).toUTCString();
    assert.ok(Math.abs(retryAfterMs(inFive)! - 5000) < 1500);
  });
  it('sleep rejects at once with an AbortError when aborted', async () => {
    const c = new AbortController();
    setTimeout(() => c.abort(), 20);
    const t0 = Date.now();
    await assert.rejects(sleep(10_000, c.signal), { name: 'AbortError' });
    assert.ok(Date.now() - t0 < 1000);
  });
});
