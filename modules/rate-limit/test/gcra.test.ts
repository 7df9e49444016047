import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Gcra } from '../services/gcra.ts';
import { defaultCost } from '../services/cost.ts';

const limits = { ratePerSecond: 10, burstSeconds: 60 }; // 600 units of burst, one unit back every 100 ms

test('a fresh key may spend the whole burst at once, and not one unit more', () => {
  const g = new Gcra();
  const t0 = 1_000_000;
  for (let i = 0; i < 20; i++) assert.equal(g.take('ip', 30, t0, limits).allowed, true, `request ${i}`);
  const refused = g.take('ip', 1, t0, limits);
  assert.equal(refused.allowed, false);
  // One unit comes back after one emission interval.
  if (!refused.allowed) assert.ok(Math.abs(refused.retryAfterMs - 100) < 1e-6);
  assert.equal(g.take('ip', 1, t0 + 99, limits).allowed, false);
  assert.equal(g.take('ip', 1, t0 + 100, limits).allowed, true);
});

test('the wait reported is exactly the time until the request would pass', () => {
  const g = new Gcra();
  const t0 = 0;
  assert.equal(g.take('ip', 600, t0, limits).allowed, true);
  const r = g.take('ip', 30, t0 + 1000, limits); // 10 units back after 1 s, 30 needed
  assert.equal(r.allowed, false);
  if (r.allowed) return;
  assert.ok(Math.abs(r.retryAfterMs - 2000) < 1e-6, String(r.retryAfterMs));
  assert.equal(g.take('ip', 30, t0 + 1000 + r.retryAfterMs - 1, limits).allowed, false);
  assert.equal(g.take('ip', 30, t0 + 1000 + r.retryAfterMs, limits).allowed, true);
});

test('a refused request costs nothing, and keys are independent', () => {
  const g = new Gcra();
  assert.equal(g.take('a', 600, 0, limits).allowed, true);
  for (let i = 0; i < 5; i++) assert.equal(g.take('a', 100, 0, limits).allowed, false);
  assert.equal(g.take('a', 10, 1000, limits).allowed, true, 'the refusals did not push the budget back');
  assert.equal(g.take('b', 600, 0, limits).allowed, true);
});

test('remaining counts the units still spendable', () => {
  const g = new Gcra();
  const r = g.take('ip', 100, 0, limits);
  assert.deepEqual(r, { allowed: true, remaining: 500 });
});

test('a request dearer than the burst is charged the burst, so it can pass on a full budget', () => {
  const g = new Gcra();
  const small = { ratePerSecond: 0.1, burstSeconds: 60 }; // burst 6 units
  assert.equal(g.take('ip', 100, 0, small).allowed, true);
  const r = g.take('ip', 100, 1000, small);
  assert.equal(r.allowed, false);
  if (!r.allowed) assert.ok(Math.abs(r.retryAfterMs - 59_000) < 1e-6);
});

test('a changed rate applies to the next request', () => {
  const g = new Gcra();
  assert.equal(g.take('ip', 600, 0, limits).allowed, true);
  assert.equal(g.take('ip', 1, 0, limits).allowed, false);
  // The debt is kept as time; at ten times the rate a unit comes back after 10 ms, not 100 ms.
  const faster = { ratePerSecond: 100, burstSeconds: 60 };
  assert.equal(g.take('ip', 1, 9, faster).allowed, false);
  assert.equal(g.take('ip', 1, 10, faster).allowed, true);
  assert.equal(g.take('ip', 1, 10, limits).allowed, false);
});

test('sweep forgets only keys whose budget is full again', () => {
  const g = new Gcra();
  g.take('idle', 10, 0, limits); // full again at 1000 ms
  g.take('busy', 600, 0, limits); // full again at 60 s
  assert.equal(g.sweep(999), 0);
  assert.equal(g.sweep(1000), 1);
  assert.equal(g.size, 1);
  assert.equal(g.sweep(60_000), 1);
  assert.equal(g.size, 0);
});

test('without a route price, reads cost 1 and writes 5', () => {
  for (const method of ['GET', 'HEAD', 'OPTIONS']) assert.equal(defaultCost(method), 1, method);
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) assert.equal(defaultCost(method), 5, method);
});
