/**
 * Two kernels on one home: the node running a scheduled job and its turn goes silent (its heartbeat stops, as if
 * killed); the other node takes the run over and runs it again (the slot is within misfire_grace_secs), joining the
 * turn the dead node had queued (the queue's idempotency key) instead of queueing a second one; the run is recorded
 * once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startAgentTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { call, createJob, spawn } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-sched-nodes-'));
const fake = new FakeProvider();
const kernels: TestKernel[] = [];
let agent: string;
type Run = { node: string; state: string; slot: string };

const start = async () => {
  const k = await startAgentTestKernel({ fake, home, only: ['scheduler', 'error-envelope'], heartbeatMs: 100, feedPollMs: 50 });
  kernels.push(k);
  return k;
};

before(async () => {
  await fake.start();
  agent = await spawn(await start(), 'nightly');
});

after(async () => {
  await fake.stop(); // first: it cuts the dead node's turn, which a stopping kernel would wait for
  for (const k of kernels) await k.stop().catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
});

test('a run whose node died is taken over by the live node, run again once, and recorded once', { timeout: 30_000 }, async () => {
  // The dead node's turn outlasts the test: had it ended before the takeover, the live node would join the finished
  // turn and nothing would run again (right, but not what this test is about).
  fake.enqueue({ text: 'done', delayMs: 20_000 }).setFallback({ text: 'done', delayMs: 300 });
  const at = new Date(Date.now() + 800).toISOString();
  const job = await createJob(kernels[0], { agent_id: agent, cron: `at ${at}`, prompt: 'the nightly run' });
  const runs = async (k: TestKernel) => (await call<Run[]>(k, `/api/schedules/${job.id}/runs`)).body;
  const dying = kernels[0];
  const [first] = (await waitFor(
    async () => {
      const list = await runs(dying);
      return list.length && fake.requests.length ? list : undefined;
    },
    5000,
    'the node to claim the slot and start its turn',
  ))!;
  assert.deepEqual([first.state, first.node], ['running', dying.kernel.nodes.id]);
  // The second process starts once the run and its turn are the first one's: had both been running, the second could
  // have claimed the queued turn itself, and its takeover would then wait for its own 20 s turn.
  const live = await start();

  await dying.kernel.nodes.stop();
  const [taken] = (await waitFor(
    async () => {
      const [run] = await runs(live);
      return run?.state === 'ok' ? [run] : undefined;
    },
    // Found dead within a few 100 ms beats, then a 0.3 s turn; the margin is for a loaded CI machine.
    20_000,
    'the live node to run it again and record it',
  ))!;
  assert.equal(taken.node, live.kernel.nodes.id);
  assert.equal(taken.slot, first.slot);
  const after = (await call<{ run_count: number; last_status: string; enabled: boolean }>(live, `/api/schedules/${job.id}`)).body;
  assert.deepEqual([after.run_count, after.last_status, after.enabled], [1, 'ok', false]);
  // The dead node's turn (still in flight, a zombie here) and the one the live node ran from the queue: no third.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const turns = fake.requests.filter((r) => JSON.stringify(r.body).includes('the nightly run'));
  assert.equal(turns.length, 2);
});
