/** Two kernels on one home (two processes' worth: two connections, two nodes): the queue's lane caps hold across them. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startAgentTestKernel, type TestKernel } from '@talon/testing';
import { taskQueue, type TaskQueue } from '@talon/tasks';
import { spawn } from './helpers.ts';

const DELAY_MS = 400;
const home = mkdtempSync(path.join(tmpdir(), 'talon-tasks-procs-'));
const fake = new FakeProvider();
const kernels: TestKernel[] = [];
let agent: string;

before(async () => {
  await fake.start();
  fake.setFallback({ text: 'ok', delayMs: DELAY_MS });
  const start = () => startAgentTestKernel({ fake, home, only: ['tasks'], config: '[tasks.lanes]\nschedule = 1\n', feedPollMs: 50 });
  kernels.push(await start());
  // The agent exists before the second process starts, so both know it whatever their agent caches do.
  agent = await spawn(kernels[0], 'capped');
  kernels.push(await start());
});

after(async () => {
  for (const k of kernels) await k.stop();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

test("a lane's cap of 1 holds over both processes: their turns run one after the other, never together", { timeout: 30_000 }, async () => {
  const queues = kernels.map((k) => k.kernel.services.view<TaskQueue>(taskQueue.id));
  const started = Date.now();
  const turns = await Promise.all(
    queues.map((q, i) => q.runTurn({ lane: 'schedule', agentId: agent, message: `turn ${i}`, origin: 'schedule', sessionMode: 'new' })),
  );
  const elapsed = Date.now() - started;
  assert.deepEqual(
    turns.map((t) => t.response),
    ['ok', 'ok'],
  );
  assert.ok(elapsed >= 2 * DELAY_MS, `both turns ran at once (${elapsed} ms for two turns of ${DELAY_MS} ms)`);
  const lanes = await queues[1].lanes();
  assert.equal(lanes.find((l) => l.lane === 'schedule')?.completed, 2);
});
