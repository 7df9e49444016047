/**
 * Two kernels on one home: a trigger created on one process fires for an event on the other (its engine follows
 * the change feed), and the same event on both processes fires it once per cooldown.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startAgentTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { call, createTrigger, publishOn, spawn } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-triggers-procs-'));
const fake = new FakeProvider();
const kernels: TestKernel[] = [];
let watcher: string;

const fireCount = async (k: TestKernel, id: string) => (await call<{ fire_count: number }>(k, `/api/triggers/${id}`)).body.fire_count;

before(async () => {
  await fake.start();
  fake.setFallback({ text: 'noted' });
  const start = () => startAgentTestKernel({ fake, home, only: ['triggers', 'error-envelope'], feedPollMs: 50 });
  kernels.push(await start());
  // The agent exists before the second process starts, so both know it whatever their agent caches do.
  watcher = await spawn(kernels[0], 'watcher');
  kernels.push(await start());
});

after(async () => {
  for (const k of kernels) await k.stop();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

test('a trigger created on one process fires for an event on the other', { timeout: 20_000 }, async () => {
  const [a, b] = kernels;
  const id = await createTrigger(a, { agent_id: watcher, pattern: { custom: { event_type: 'made-on-a' } }, prompt_template: '{{event}}', cooldown_secs: 0 });
  // b's engine hears of it through the change feed (polled every 50 ms here); until then an event there finds nothing.
  await waitFor(
    async () => {
      publishOn(b, 'custom', { type: 'made-on-a', data: 1 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      return (await fireCount(b, id)) > 0;
    },
    5000,
    'b to fire the trigger made on a',
  );
});

test('the same event on both processes fires a trigger once per cooldown', { timeout: 20_000 }, async () => {
  const [a, b] = kernels;
  const id = await createTrigger(a, { agent_id: watcher, pattern: { custom: { event_type: 'everywhere' } }, prompt_template: '{{event}}', cooldown_secs: 60 });
  await waitFor(async () => (await call(b, `/api/triggers/${id}`)).status === 200, 2000, 'the trigger');
  // Wait until b's engine has it too (its fire attempts then reach the store, which decides).
  await new Promise((resolve) => setTimeout(resolve, 300));
  publishOn(a, 'custom', { type: 'everywhere', data: 1 });
  publishOn(b, 'custom', { type: 'everywhere', data: 1 });
  await waitFor(async () => (await fireCount(a, id)) >= 1, 5000, 'a fire');
  // A pause that proves an absence: the other process's attempt does not fire it a second time.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(await fireCount(a, id), 1);
});
