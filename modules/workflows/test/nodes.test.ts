/**
 * Two kernels on one home: a second process starting leaves the first one's running workflow alone; the run is
 * failed as interrupted only once its node is gone (its heartbeat stops), by the live node.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startAgentTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { call, createWorkflow, spawn } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-wf-nodes-'));
const fake = new FakeProvider();
const kernels: TestKernel[] = [];
type Run = { id: string; state: string; error: string | null };

before(async () => {
  await fake.start();
});

after(async () => {
  for (const k of kernels) await k.stop().catch(() => undefined);
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

// Every process of the home uses the one provider.
const start = async () => {
  const k = await startAgentTestKernel({ fake, home, only: ['workflows', 'error-envelope'], heartbeatMs: 100, feedPollMs: 50 });
  kernels.push(k);
  return k;
};

test('a cancel sent to one process reaches the run where it executes, on another', { timeout: 30_000 }, async () => {
  const a = await start();
  const agent = await spawn(a, 'cancelled');
  const id = await createWorkflow(a, { name: 'cancel me', steps: [{ agent_id: agent }] });
  fake.setFallback({ text: 'late', delayMs: 3000 });
  const before = fake.requests.length;
  const answer = a.request(`/api/workflows/${id}/run`, { method: 'POST', json: { input: 'go' } }).then((r) => r.json() as Promise<{ status: string }>);
  await waitFor(() => fake.requests.length > before, 5000, 'the step to reach the provider');
  const b = await start();
  const run = (await call<Run[]>(b, `/api/workflows/${id}/runs`)).body[0];
  const cancelled = await call<{ state: string }>(b, `/api/workflows/runs/${run.id}/cancel`, { method: 'POST' });
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.equal(cancelled.body.state, 'Cancelled');
  assert.equal((await answer).status, 'cancelled');
  for (const k of kernels.splice(0)) await k.stop();
});

test(
  'a second process leaves the first one’s running run alone; when the first node is gone, its run is Failed (interrupted)',
  { timeout: 30_000 },
  async () => {
    const a = await start();
    const agent = await spawn(a, 'slow');
    const id = await createWorkflow(a, { name: 'long', steps: [{ agent_id: agent }] });
    fake.setFallback({ text: 'late', delayMs: 3000 });
    void a.request(`/api/workflows/${id}/run`, { method: 'POST', json: { input: 'go' } }).catch(() => undefined);
    await waitFor(() => fake.requests.length > 0, 5000, 'the step to reach the provider');

    const b = await start();
    // Several heartbeats of b: a is live, so its run stays Running.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen = (await call<Run[]>(b, `/api/workflows/${id}/runs`)).body;
    assert.equal(seen[0].state, 'Running', 'the second process failed a live process’s run');

    // a's heartbeat stops (as if killed): b finds the node gone and fails the run.
    await a.kernel.nodes.stop();
    const failed = (await waitFor(
      async () => {
        const run = (await call<Run[]>(b, `/api/workflows/${id}/runs`)).body[0];
        return run.state === 'Failed' ? run : undefined;
      },
      5000,
      'the run of the gone node to be Failed',
    ))!;
    assert.match(failed.error ?? '', /interrupted: the service stopped while the run was in progress \(Running at the restart\)/);
  },
);
