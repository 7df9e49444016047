import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { auditTrail, type AuditTrail } from '@talon/audit';

let k: TestKernel;
let trail: AuditTrail;

interface Broken {
  status: string;
  chain_length: number;
  broken_at: number;
  kind: string;
  expected: string;
  found: string;
  breaks: Array<{ broken_at: number; kind: string }>;
}

beforeEach(async () => {
  k = await startTestKernel({ only: ['audit', 'error-envelope'] });
  trail = k.kernel.services.view(auditTrail.id) as AuditTrail;
  // Start-up entries first, then ten of ours: a chain of known length to tamper with.
  await trail.flush();
  for (let i = 0; i < 10; i++) trail.record({ event_type: 'test_event', details: { i } });
  await trail.flush();
});
afterEach(() => k.stop());

// Tampering goes through the kernel's store, so the same statements break the chain on either engine.
const store = () => k.kernel.store;
const verify = async (): Promise<Broken> => {
  const res = await k.request('/api/audit/verify');
  assert.equal(res.status, 200);
  return (await res.json()) as Broken;
};
const lastId = async () => (await store().one<{ n: number }>('SELECT max(id) AS n FROM audit_entries'))!.n;

test('the untouched chain verifies', async () => {
  const report = await verify();
  assert.equal(report.status, 'valid');
  assert.equal(report.chain_length, await lastId());
});

test('changed details: a hash break at that entry', async () => {
  const id = (await lastId()) - 4;
  await store().run(`UPDATE audit_entries SET details = '{"i":999}' WHERE id = ?`, [id]);
  const report = await verify();
  assert.equal(report.status, 'broken');
  assert.equal(report.broken_at, id);
  assert.equal(report.kind, 'hash');
  assert.notEqual(report.expected, report.found);
  assert.equal(report.breaks.length, 1);
});

test('a changed hash that someone recomputed still breaks the next link', async () => {
  const id = (await lastId()) - 4;
  await store().run(`UPDATE audit_entries SET hash = ? WHERE id = ?`, ['f'.repeat(64), id]);
  const report = await verify();
  assert.deepEqual(
    report.breaks.map((b) => [b.broken_at, b.kind]),
    [
      [id, 'hash'],
      [id + 1, 'prev_hash'],
    ],
  );
});

test('a deleted entry: a prev_hash break at the next one', async () => {
  const id = (await lastId()) - 3;
  await store().run('DELETE FROM audit_entries WHERE id = ?', [id]);
  const report = await verify();
  assert.equal(report.status, 'broken');
  assert.equal(report.broken_at, id + 1);
  assert.equal(report.kind, 'prev_hash');
});

test('reordered entries are found', async () => {
  const a = (await lastId()) - 5;
  const b = a + 1;
  await store().tx(async (t) => {
    await t.run('UPDATE audit_entries SET id = -1 WHERE id = ?', [a]);
    await t.run('UPDATE audit_entries SET id = ? WHERE id = ?', [a, b]);
    await t.run('UPDATE audit_entries SET id = ? WHERE id = -1', [b]);
  });
  const report = await verify();
  assert.equal(report.status, 'broken');
  assert.equal(report.broken_at, a);
  assert.ok(report.breaks.some((x) => x.broken_at === b));
});

test('a cut tail: the tip no longer matches', async () => {
  const id = await lastId();
  await store().run('DELETE FROM audit_entries WHERE id >= ?', [id - 1]);
  const report = await verify();
  assert.equal(report.status, 'broken');
  assert.equal(report.kind, 'tip');
  assert.equal(report.broken_at, id);
});

test('appends go on from the chain tip after a restart', async () => {
  const home = k.home;
  const before = await lastId();
  await k.kernel.stop();
  // The same home and, on PostgreSQL, the same database (k's, dropped by afterEach).
  const again = await startTestKernel({
    only: ['audit', 'error-envelope'],
    home,
    databaseUrl: k.databaseUrl,
    config: 'log_level = "silent"\napi_listen = "127.0.0.1:0"\n',
  });
  try {
    const res = await again.request('/api/audit/verify');
    const report = (await res.json()) as { status: string; chain_length: number };
    assert.equal(report.status, 'valid');
    // The shutdown and the module stops of the first run were written on the clean stop.
    assert.ok(report.chain_length > before);
    const types = (await again.kernel.store.many<{ event_type: string }>('SELECT event_type FROM audit_entries WHERE id > ?', [before])).map(
      (r) => r.event_type,
    );
    assert.ok(types.includes('shutdown'));
  } finally {
    await again.stop();
  }
});
