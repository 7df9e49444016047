/**
 * Several processes on one home share the stored wakes: each is published by one of them; the claims of a process
 * that is gone are published by another.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { openTestStore, startTestKernel, waitFor } from '@talon/testing';
import type { TalonEvent, EventAccess } from '@talon/module-sdk';
import { WakeInbox } from '../services/wakes.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');
const LEASE = 6000;

/** A bus that records the wake ids published on it. */
function recorder(): { events: EventAccess; wakeIds: string[] } {
  const wakeIds: string[] = [];
  const events = {
    publish: (type: string, data: { data: { wakeId: string } }) => {
      wakeIds.push(data.data.wakeId);
      return { id: 'e', type, data, at: '', source: 'test' };
    },
    subscribe: () => () => undefined,
  } as unknown as EventAccess;
  return { events, wakeIds };
}

test('two processes delivering at once publish each stored wake once, in arrival order', async () => {
  const opened = openTestStore([moduleDir]);
  // A second connection on the same file: another process.
  const other = openTestStore([], opened.file);
  try {
    const [ra, rb] = [recorder(), recorder()];
    const log = pino({ level: 'silent' });
    const a = new WakeInbox(opened.store, ra.events, log, () => false, { id: 'node-a', leaseMs: LEASE, active: true });
    const b = new WakeInbox(other.store, rb.events, log, () => false, { id: 'node-b', leaseMs: LEASE, active: true });
    const stored: string[] = [];
    for (let i = 0; i < 30; i++) stored.push((await (i % 2 ? a : b).accept({ text: `w${i}`, mode: 'now' })).id);
    await Promise.all([a.deliverPending(), b.deliverPending(), a.deliverPending(), b.deliverPending()]);
    assert.deepEqual([...ra.wakeIds, ...rb.wakeIds].sort(), [...stored].sort(), 'each wake published once');
    for (const published of [ra.wakeIds, rb.wakeIds])
      assert.deepEqual(
        published,
        stored.filter((id) => published.includes(id)),
        'in arrival order',
      );
    assert.equal(await a.pendingCount(), 0);
  } finally {
    other.close();
    opened.close();
  }
});

test('two processes given the same Idempotency-Key at once: one stores the wake, the other gets its id', async () => {
  const opened = openTestStore([moduleDir]);
  const other = openTestStore([], opened.file);
  try {
    const log = pino({ level: 'silent' });
    const a = new WakeInbox(opened.store, recorder().events, log, () => false, { id: 'node-a', leaseMs: LEASE, active: true });
    const b = new WakeInbox(other.store, recorder().events, log, () => false, { id: 'node-b', leaseMs: LEASE, active: true });
    const wake = { text: 'deploy done', mode: 'now' as const };
    const [first, second] = await Promise.all([a.accept(wake, 'key-1'), b.accept(wake, 'key-1')]);
    assert.equal(first.id, second.id);
    assert.deepEqual([first.duplicate, second.duplicate].sort(), [false, true]);
    await assert.rejects(b.accept({ ...wake, text: 'other' }, 'key-1'), /already used for a different wake/);
    assert.equal(await a.pendingCount(), 1);
  } finally {
    other.close();
    opened.close();
  }
});

test("a dead process's claimed wakes are published by a live one; at start, those of nodes that are not live are", async () => {
  const k = await startTestKernel({ only: ['hooks-inbound'], heartbeatMs: 200, feedPollMs: 50, keepHome: true });
  let again: Awaited<ReturnType<typeof startTestKernel>> | undefined;
  const heard: string[] = [];
  const listen = (kernel: typeof k.kernel) => {
    const scope = kernel.events.scope('test');
    scope.subscribe(['custom'], (e: TalonEvent) => {
      const data = (e.data as { data?: { wakeId?: string } }).data;
      if (data?.wakeId) heard.push(data.wakeId);
    });
    scope.commit();
  };
  try {
    listen(k.kernel);
    const claimedBy = (node: string, id: string) =>
      k.kernel.store.run("INSERT INTO hooks_inbound_wakes (id, text, mode, received_at, node, lease_until) VALUES (?, 'x', 'now', ?, ?, ?)", [
        id,
        Date.now(),
        node,
        Date.now() + 600,
      ]);
    await k.kernel.store.run("INSERT INTO kernel_nodes (id, pid, host, boot_at, heartbeat_at, state) VALUES ('ghost', 1, 'h', ?, ?, 'live')", [
      Date.now(),
      Date.now(),
    ]);
    await claimedBy('ghost', 'claimed-by-the-dead');
    await waitFor(() => heard.includes('claimed-by-the-dead'), 5000, "the dead process's wake");
    await claimedBy('never-seen', 'claimed-before-the-start');
    // A pause that proves an absence: the running process leaves a claim of a process it never saw.
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.ok(!heard.includes('claimed-before-the-start'), 'a running process leaves claims it was not told about');
    await k.stop();
    again = await startTestKernel({ only: ['hooks-inbound'], home: k.home, heartbeatMs: 200, feedPollMs: 50 });
    // Published when the service became ready (before a test could listen): the row says so.
    const delivered = async () =>
      (await again!.kernel.store.one<{ at: number | null }>("SELECT delivered_at AS at FROM hooks_inbound_wakes WHERE id = 'claimed-before-the-start'"))?.at;
    await waitFor(delivered, 5000, 'the wake swept at start');
  } finally {
    await again?.stop();
    rmSync(k.home, { recursive: true, force: true });
  }
});
