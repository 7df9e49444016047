/**
 * Several processes on one database: each append reads the chain's tip inside its own write transaction, so appends
 * of two processes queue up behind each other and the chain never forks, and none works from a tip it remembered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestStore } from '@talon/testing';
import { Trail } from '../services/trail.ts';

const AUDIT_DIR = path.join(import.meta.dirname, '..');
const ROOT = path.join(AUDIT_DIR, '..', '..');

/** A trail whose write failures are counted (a failed batch stays queued and is retried by the next flush). */
function trailOn(store: ReturnType<typeof openTestStore>['store']) {
  const failures: Error[] = [];
  return { trail: new Trail(store, (err) => failures.push(err)), failures };
}

/** Resolves with the child's next message, or rejects after `ms` (every wait is bounded). */
async function nextMessage<T>(child: ChildProcess, ms: number): Promise<T> {
  const [message] = (await Promise.race([
    once(child, 'message'),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no message from the appender within ${ms} ms`)), ms).unref()),
  ])) as [T];
  return message;
}

test('two processes appending at once: one chain, every entry in it, ids without a gap', async () => {
  const main = openTestStore([AUDIT_DIR]);
  const ROUNDS = 100;
  const child = fork(path.join(AUDIT_DIR, 'test', 'appender.ts'), [main.file, String(ROUNDS), 'child'], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    assert.equal(await nextMessage<string>(child, 30_000), 'ready');
    const { trail, failures } = trailOn(main.store);
    child.send('go');
    const childDone = nextMessage<{ failed: number; left: number }>(child, 60_000);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < 3; i++) trail.record({ event_type: 'appended', agent_id: 'main', details: { round, i } });
      await trail.flush();
      // A pause between batches (the appender makes the same), so the other process's transactions land between ours.
      await sleep(1);
    }
    const other = await childDone;
    assert.deepEqual(other, { failed: 0, left: 0 });
    assert.deepEqual(failures, []);

    const report = await trail.verify();
    assert.equal(report.status, 'valid', JSON.stringify(report));
    assert.equal(report.chain_length, 2 * ROUNDS * 3);
    const ids = await main.store.many<{ id: number; agent_id: string }>('SELECT id, agent_id FROM audit_entries ORDER BY id');
    assert.deepEqual(
      ids.map((r) => r.id),
      ids.map((_, i) => i + 1),
    );
    const by = (who: string) => ids.filter((r) => r.agent_id === who).length;
    assert.deepEqual([by('main'), by('child')], [ROUNDS * 3, ROUNDS * 3]);
    // The two really appended at once: their batches alternate along the chain.
    const turns = ids.filter((r, i) => i > 0 && r.agent_id !== ids[i - 1].agent_id).length;
    assert.ok(turns >= 4, `the appends did not interleave (${turns} changes of writer)`);
  } finally {
    child.kill();
    main.close();
  }
});

test('a trail appends after the tip another connection moved, not after one it remembered', async () => {
  const first = openTestStore([AUDIT_DIR]);
  const second = openTestStore([], first.file);
  try {
    const a = trailOn(first.store);
    const b = trailOn(second.store);
    for (const [who, { trail }] of [
      ['a', a],
      ['b', b],
      ['a', a],
      ['b', b],
    ] as const) {
      trail.record({ event_type: 'appended', agent_id: who });
      await trail.flush();
    }
    assert.deepEqual([...a.failures, ...b.failures], []);
    const report = await b.trail.verify();
    assert.equal(report.status, 'valid');
    assert.equal(report.chain_length, 4);
  } finally {
    second.close();
    first.close();
  }
});

test('a row slipped in past the tip neither blocks the trail nor goes unnoticed', async () => {
  const opened = openTestStore([AUDIT_DIR]);
  try {
    const { trail, failures } = trailOn(opened.store);
    trail.record({ event_type: 'appended' });
    await trail.flush();
    await opened.store.run(
      `INSERT INTO audit_entries (id, timestamp, event_type, agent_id, details, outcome, prev_hash, hash) VALUES (2, 'x', 'forged', NULL, '{}', 'ok', 'p', 'h')`,
    );
    trail.record({ event_type: 'appended' });
    await trail.flush();
    assert.deepEqual(failures, []);
    const report = await trail.verify();
    assert.equal(report.status, 'broken');
    assert.equal(report.chain_length, 3);
    assert.ok(report.status === 'broken' && report.breaks.some((b) => b.broken_at === 2));
  } finally {
    opened.close();
  }
});

test('verify walks a chain longer than one page and reads a cut tail against the tip', async () => {
  const opened = openTestStore([AUDIT_DIR]);
  try {
    const { trail } = trailOn(opened.store);
    for (let i = 0; i < 10_005; i++) trail.record({ event_type: 'appended', details: { i } });
    await trail.flush();
    const whole = await trail.verify();
    assert.equal(whole.status, 'valid');
    assert.equal(whole.chain_length, 10_005);
    assert.equal(whole.status === 'valid' && whole.last_entry?.id, 10_005);
    await opened.store.run('DELETE FROM audit_entries WHERE id > ?', [10_001]);
    const cut = await trail.verify();
    assert.equal(cut.status === 'broken' && cut.kind, 'tip');
  } finally {
    opened.close();
  }
});
