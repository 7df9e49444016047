/**
 * A fire's commit (count, cooldown stamp) also records its pending turn; the turn's delivery row removes it. If the
 * process dies in between, a live process takes the fire over and resumes its turn — joining the turn the dead one
 * had queued (keyed by the fire's id) — and records its delivery: once, on one process.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startAgentTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { call, createTrigger, deliveries, publishOn, spawn } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-triggers-takeover-'));
const fake = new FakeProvider();
const kernels: TestKernel[] = [];
let watcher: string;

const turnsFor = (text: string) => fake.requests.filter((r) => JSON.stringify(r.body).includes(text));
const pendingFires = async (k: TestKernel) => (await k.kernel.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM triggers_fires'))!.n;

const start = async () => {
  const k = await startAgentTestKernel({ fake, home, only: ['triggers', 'error-envelope'], heartbeatMs: 100, feedPollMs: 50 });
  kernels.push(k);
  return k;
};

before(async () => {
  await fake.start();
  watcher = await spawn(await start(), 'watcher');
});

after(async () => {
  await fake.stop(); // first: it cuts the dead node's turn, which a stopping kernel would wait for
  for (const k of kernels) await k.stop().catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
});

test('a fire whose process died before its turn reported is resumed by the live one, and delivered once', { timeout: 30_000 }, async () => {
  const [dying] = kernels;
  const id = await createTrigger(dying, { agent_id: watcher, pattern: { custom: { event_type: 'nightly' } }, prompt_template: 'resume me: {{event}}' });
  // The dead node's turn outlasts the test; the one the live node runs answers at once.
  fake.enqueue({ text: 'from the dead node', delayMs: 20_000 }).setFallback({ text: 'from the live node' });
  publishOn(dying, 'custom', { type: 'nightly', data: 1 });
  await waitFor(() => turnsFor('resume me').length === 1 || undefined, 5000, 'the fired turn to reach the provider');
  // The second process starts once the fire and its turn are the first one's: had both been running, the second could
  // have claimed the queued turn itself, and its resume would then wait for its own 20 s turn.
  const live = await start();
  assert.equal(await pendingFires(live), 1);

  await dying.kernel.nodes.stop();
  const [delivery] = (await waitFor(
    async () => {
      const list = await deliveries(live, watcher);
      return list.length ? list : undefined;
    },
    // Found dead within a few 100 ms beats; the margin is for a loaded CI machine.
    20_000,
    'the live node to resume the turn and record its delivery',
  ))!;
  assert.deepEqual([delivery.status, delivery.source, delivery.source_id, delivery.response], ['kept', 'trigger', id, 'from the live node']);
  assert.match(delivery.cause ?? '', /nightly/);
  assert.equal(await pendingFires(live), 0);
  // The dead node's turn (a zombie here, still waiting) and the one run again: no third, and no second delivery.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(turnsFor('resume me').length, 2);
  assert.equal((await deliveries(live, watcher)).length, 1);
  assert.equal((await call<{ fire_count: number }>(live, `/api/triggers/${id}`)).body.fire_count, 1);
});
