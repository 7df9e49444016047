import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decayFactor } from '../services/entries.ts';
import { memoryOnDisk } from './helpers.ts';

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-10T00:00:00Z');

test('decayFactor: exp(-rate/boost * days), boost = min(1 + log2(accesses), 4)', () => {
  assert.equal(decayFactor(0.1, 0, 0), 1);
  assert.ok(Math.abs(decayFactor(0.1, 10, 0) - Math.exp(-1)) < 1e-12);
  assert.ok(Math.abs(decayFactor(0.1, 10, 1) - Math.exp(-1)) < 1e-12);
  assert.ok(Math.abs(decayFactor(0.1, 10, 4) - Math.exp(-1 / 3)) < 1e-12);
  assert.ok(Math.abs(decayFactor(0.1, 10, 1024) - Math.exp(-1 / 4)) < 1e-12);
});

test('decay over simulated days: exact scores, once per period, path independent', async () => {
  let now = T0 + 6 * 3_600_000; // 06:00, mid-period
  const { memory, close } = await memoryOnDisk({ now: () => now, config: { decay_rate: 0.1, decay_period_hours: 24 } });
  try {
    const a = await memory.entries.add({ content: 'fact a', agentId: 'x' });
    const b = await memory.entries.add({ content: 'fact b', agentId: 'x' });
    const score = async (id: string) => (await memory.entries.row(id))!.score;

    // Same period as creation: nothing to decay.
    assert.equal((await memory.entries.decay()).decayed, 0);
    assert.equal(await score(a.id), 1);

    // Three days later at 12:00: decay runs up to the period start (day 3, 00:00), i.e. 2.75 days after creation.
    now = T0 + 3 * DAY + 12 * 3_600_000;
    const r1 = await memory.entries.decay();
    assert.equal(r1.decayed, 2);
    assert.equal(r1.applied_until, new Date(T0 + 3 * DAY).toISOString());
    const expected = Math.exp(-0.1 * 2.75);
    assert.ok(Math.abs((await score(a.id)) - expected) < 1e-12, `${await score(a.id)} vs ${expected}`);

    // Applying again in the same period changes nothing.
    now += 6 * 3_600_000;
    assert.equal((await memory.entries.decay()).decayed, 0);
    assert.ok(Math.abs((await score(a.id)) - expected) < 1e-12);

    // Entry b is recalled on day 5; a is not. Decay once on day 10.
    now = T0 + 5 * DAY + 3_600_000;
    await memory.entries.touch([b.id]);
    const bAccessed = now;
    now = T0 + 10 * DAY + 1000;
    await memory.entries.decay();
    // a: continuous from day 3 to day 10 → total 9.75 days; same as decaying daily.
    assert.ok(Math.abs((await score(a.id)) - Math.exp(-0.1 * 9.75)) < 1e-12);
    // b: decayed to day 3, then from its access (day 5 01:00) to day 10 with access_count 1 (boost 1).
    const bDays = (T0 + 10 * DAY - bAccessed) / DAY;
    assert.ok(Math.abs((await score(b.id)) - Math.exp(-0.1 * 2.75) * Math.exp(-0.1 * bDays)) < 1e-12);
  } finally {
    await close();
  }
});

test('daily and one-shot decay agree (path independence)', async () => {
  let nowA = T0;
  let nowB = T0;
  const daily = await memoryOnDisk({ now: () => nowA, config: { decay_rate: 0.05 } });
  const once = await memoryOnDisk({ now: () => nowB, config: { decay_rate: 0.05 } });
  try {
    const a = await daily.memory.entries.add({ content: 'x' });
    const b = await once.memory.entries.add({ content: 'x' });
    for (let d = 1; d <= 30; d++) {
      nowA = T0 + d * DAY;
      await daily.memory.entries.decay();
    }
    nowB = T0 + 30 * DAY;
    await once.memory.entries.decay();
    const sa = (await daily.memory.entries.row(a.id))!.score;
    const sb = (await once.memory.entries.row(b.id))!.score;
    assert.ok(Math.abs(sa - sb) < 1e-12);
    assert.ok(Math.abs(sa - Math.exp(-0.05 * 30)) < 1e-12);
  } finally {
    await daily.close();
    await once.close();
  }
});

test('cleanup: session entries expire after session_ttl_hours, stale ones go below stale_score, user entries stay', async () => {
  let now = T0;
  const { memory, close } = await memoryOnDisk({ now: () => now, config: { decay_rate: 1, session_ttl_hours: 24, stale_score: 0.05 } });
  try {
    const session = await memory.entries.add({ content: 'session thing', level: 'session' });
    const agent = await memory.entries.add({ content: 'agent thing', level: 'agent' });
    const user = await memory.entries.add({ content: 'user thing', level: 'user' });
    now = T0 + 2 * DAY;
    assert.deepEqual(await memory.entries.cleanup({ stale: true }), { removed: 1, expired: 1, stale: 0 });
    assert.equal(await memory.entries.row(session.id), undefined);
    now = T0 + 4 * DAY; // exp(-4) ≈ 0.018 < 0.05
    await memory.entries.decay();
    assert.deepEqual(await memory.entries.cleanup({ stale: false }), { removed: 0, expired: 0, stale: 0 });
    assert.deepEqual(await memory.entries.cleanup({ stale: true }), { removed: 1, expired: 0, stale: 1 });
    assert.equal(await memory.entries.row(agent.id), undefined);
    assert.ok(await memory.entries.row(user.id));
  } finally {
    await close();
  }
});
