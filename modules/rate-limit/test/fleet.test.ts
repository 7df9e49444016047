/**
 * Several nodes on one database: the approximate mode divides the limit by the live nodes, the exact mode charges one
 * budget per client in a table (a refused request on one node after the budget was spent on the other). The two-node
 * tests run on both engines: two processes of one home on SQLite, two kernels on one database on PostgreSQL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { postgresMissing, startTestKernel, type TestKernel } from '@talon/testing';
import { FleetShare, refreshEvery } from '../services/fleet-share.ts';

const only = ['rate-limit', 'system'];
/** Fast heartbeats: the other node is counted live, and the count read again, within a fraction of a second. */
const heartbeatMs = 500;

/**
 * Two nodes of one home on `engine`, run through `fn`, then stopped: on SQLite they share its file, on PostgreSQL the
 * kit gives a home one database (and the home is their shared data directory).
 */
async function twoNodes(engine: 'sqlite' | 'postgres', config: string, fn: (a: TestKernel, b: TestKernel) => Promise<void>): Promise<void> {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-rate-two-'));
  const options = { only, config, heartbeatMs, database: engine, home };
  const nodes: TestKernel[] = [];
  try {
    nodes.push(await startTestKernel(options));
    nodes.push(await startTestKernel(options));
    await fn(nodes[0], nodes[1]);
  } finally {
    await Promise.all(nodes.map((k) => k.stop()));
    rmSync(home, { recursive: true, force: true });
  }
}

/** Health requests to `k` one after another until the first 429 (at most `max`); returns how many passed. */
async function passedUntilRefused(k: TestKernel, max = 200): Promise<number> {
  for (let passed = 0; passed < max; passed++) {
    const res = await k.request('/api/health');
    if (res.status === 429) return passed;
    assert.equal(res.status, 200);
  }
  return max;
}

/** `fn`'s result and the whole seconds it took, rounded up: at 1 unit/s, the units that came back meanwhile. */
async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = Date.now();
  const result = await fn();
  return [result, Math.ceil((Date.now() - t0) / 1000)];
}

test("a NodeAccess with two live ids halves this node's share; alone it is the whole rate", async () => {
  let live = ['a', 'b'];
  const share = new FleetShare({ live: async () => live });
  assert.equal(share.share(10), 10, 'before the first count: alone');
  assert.equal(await share.refresh(), 2);
  assert.equal(share.share(10), 5);
  live = [];
  assert.equal(await share.refresh(), 1, 'never fewer than this node');
  assert.equal(share.share(10), 10);
  assert.equal(refreshEvery({ leaseMs: 9_000 }), 3_000, 'every beat');
  assert.equal(refreshEvery({ leaseMs: 60_000 }), 5_000, 'at most every five seconds');
});

for (const engine of ['sqlite', 'postgres'] as const) {
  const skip = engine === 'postgres' ? postgresMissing() : undefined;

  test(`approximate (the default), ${engine}: two live nodes each allow half the burst`, { skip }, async () => {
    // 1 unit/s: a 60-unit burst for the fleet, 30 GETs per node.
    await twoNodes(engine, 'rate_limit_per_second = 1\n', async (a, b) => {
      // Both nodes have counted each other (the count is read every beat here).
      await new Promise((r) => setTimeout(r, 4 * heartbeatMs));
      // Each node's share is 0.5 unit/s: half a unit back per second the test takes.
      const [onA, secondsA] = await timed(() => passedUntilRefused(a));
      const [onB, secondsB] = await timed(() => passedUntilRefused(b));
      assert.ok(onA >= 30 && onA <= 30 + secondsA, `passed on A: ${onA} in ${secondsA} s`);
      assert.ok(onB >= 30 && onB <= 30 + secondsB, `passed on B: ${onB} in ${secondsB} s`);
    });
  });

  test(`exact, ${engine}: two nodes share one budget, also under concurrent requests`, { skip }, async () => {
    await twoNodes(engine, 'rate_limit_per_second = 1\n[rate_limit]\nfleet = "exact"\n', async (a, b) => {
      // 150 requests at once, alternating between the nodes: the 60-unit burst (plus what comes back meanwhile).
      const [statuses, seconds] = await timed(() =>
        Promise.all(Array.from({ length: 150 }, (_, i) => (i % 2 ? a : b).request('/api/health').then((r) => r.status))),
      );
      const passed = statuses.filter((s) => s === 200).length;
      assert.deepEqual([...new Set(statuses)].sort(), [200, 429]);
      assert.ok(passed >= 60 && passed <= 60 + seconds, `passed across both nodes: ${passed} in ${seconds} s`);
      // Refused on B as well, with the wait the shared budget gives (one unit back each second).
      const refused = await b.request('/api/health');
      if (refused.status === 429) assert.equal(refused.headers.get('retry-after'), '1');
      assert.ok((await passedUntilRefused(b)) <= 2, 'the budget spent on both is spent on B');
    });
  });
}

test('exact, one node: the budget is the whole rate, kept in the table, and comes back', async () => {
  const k = await startTestKernel({ only, config: 'rate_limit_per_second = 1\n[rate_limit]\nfleet = "exact"\n' });
  try {
    const [passed, seconds] = await timed(() => passedUntilRefused(k));
    assert.ok(passed >= 60 && passed <= 60 + seconds, `passed ${passed} in ${seconds} s`);
    const refused = await k.request('/api/health');
    assert.equal(refused.status, 429);
    assert.deepEqual(await refused.json(), { error: 'Rate limit exceeded' });
    const rows = await k.kernel.store.many<{ tat: number }>('SELECT tat FROM rate_limit_tat');
    assert.equal(rows.length, 1, 'one row for the one client');
    assert.ok(rows[0].tat > Date.now() + 58_000, `its TAT is a minute ahead: ${rows[0].tat - Date.now()} ms`);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await k.request('/api/health')).status, 200, 'a unit came back after a second');
  } finally {
    await k.stop();
  }
});

test('a bad [rate_limit] fleet stops start-up naming the key and the allowed values', async () => {
  await assert.rejects(startTestKernel({ only, config: '[rate_limit]\nfleet = "strict"\n' }), /invalid value for 'rate_limit\.fleet'.*"approximate", "exact"/);
});
