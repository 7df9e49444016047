/**
 * Several processes on one home: two kernels share the journal. Each delivery is claimed by one of them and sent
 * once; a dead process's claims are sent by a live one; claims of a process that never comes back are sent at start.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { Receiver } from './receiver.ts';

const CONFIG = '[webhooks]\nallow_hosts = ["127.0.0.1"]\nretry_base_ms = 20\nconcurrency = 8\n';
const ONLY = ['webhooks', 'error-envelope'];
const FAST = { only: ONLY, config: CONFIG, heartbeatMs: 200, feedPollMs: 50 };

const ids = (rx: Receiver) => rx.received.map((r) => String(r.headers['x-webhook-id']));
const createHook = async (k: TestKernel, url: string) => {
  const res = await k.request('/api/webhooks', { method: 'POST', json: { name: 'shared', url, events: ['custom'] } });
  assert.equal(res.status, 201);
  return ((await res.json()) as { id: string }).id;
};

describe('webhooks: two processes on one home', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-webhooks-two-'));
  const rx = new Receiver();
  let a: TestKernel;
  let b: TestKernel;
  before(async () => {
    await rx.start();
    a = await startTestKernel({ ...FAST, home });
    b = await startTestKernel({ ...FAST, home });
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await rx.stop();
    rmSync(home, { recursive: true, force: true });
  });

  test('50 deliveries journalled by both processes are each received exactly once', async () => {
    // b reads its (empty) subscriber list now; the webhook a creates reaches it through the change feed.
    b.kernel.events.publish('test', 'custom', { type: 'before-the-hook', data: {} });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const hook = await createHook(a, rx.url + '/shared');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Both dispatchers are busy at once: slow answers keep rows pending while the other process looks for due ones.
    rx.delayMs = 20;
    const published: string[] = [];
    for (let i = 0; i < 25; i++) {
      published.push(a.kernel.events.publish('test', 'custom', { type: 'a', data: { i } }).id);
      published.push(b.kernel.events.publish('test', 'custom', { type: 'b', data: { i } }).id);
    }
    await waitFor(() => new Set(ids(rx)).size >= 50, 10_000, 'fifty deliveries');
    // Anything sent twice would arrive within this.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(ids(rx).sort(), [...published].sort(), 'each event was received exactly once');
    const journal = (await (await a.request(`/api/webhooks/${hook}`)).json()) as { deliveries: Record<string, number> };
    assert.deepEqual(journal.deliveries, { pending: 0, delivered: 50, failed: 0 });
  });
});

describe('webhooks: claims of processes that are gone', () => {
  test("a dead process's claim goes back to pending and a live one sends it; at start, claims of unknown nodes do", async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'talon-webhooks-dead-'));
    const rx = new Receiver();
    await rx.start();
    let k = await startTestKernel({ ...FAST, home });
    try {
      const hook = await createHook(k, rx.url + '/dead');
      const claimed = async (node: string, eventId: string) => {
        const now = Date.now();
        await k.kernel.store.run(
          "INSERT INTO webhooks_deliveries (hook_id, event_id, event, body, status, next_attempt_at, created_at, node, lease_until) VALUES (?, ?, 'custom', '{}', 'sending', ?, ?, ?, ?)",
          [hook, eventId, now, new Date(now).toISOString(), node, now + 600],
        );
      };
      // A process that was live a moment ago and stops beating: found dead at a heartbeat, its claim handed over.
      await k.kernel.store.run("INSERT INTO kernel_nodes (id, pid, host, boot_at, heartbeat_at, state) VALUES ('ghost', 1, 'h', ?, ?, 'live')", [
        Date.now(),
        Date.now(),
      ]);
      await claimed('ghost', 'claimed-by-the-dead');
      await waitFor(() => ids(rx).includes('claimed-by-the-dead'), 5_000, 'the dead claim sent');
      // A process unknown to the node table (it died while none ran): its claim is sent at the next start.
      await claimed('never-seen', 'claimed-before-the-start');
      // A pause that proves an absence: the running process leaves a claim of a process it never saw.
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.ok(!ids(rx).includes('claimed-before-the-start'), 'a running process leaves claims it was not told about');
      await k.stop();
      k = await startTestKernel({ ...FAST, home });
      await waitFor(() => ids(rx).includes('claimed-before-the-start'), 5_000, 'the claim swept at start');
      assert.deepEqual(ids(rx).sort(), ['claimed-before-the-start', 'claimed-by-the-dead']);
    } finally {
      await k.stop();
      await rx.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
