/**
 * Two kernels on one home: a second process starting leaves the first one's running workflow alone; the run is
 * failed as interrupted only once its node is gone (its heartbeat stops), by the live node. A keyed start on one
 * process that finds the other's run follows it through the change feed, and stops following it with its module copy.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startAgentTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { workflowRunner, type WorkflowRunner } from '@talon/workflows';
import { call, createWorkflow, spawn } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-wf-nodes-'));
const fake = new FakeProvider();
const kernels: TestKernel[] = [];
type Run = { id: string; state: string; error: string | null };

before(async () => {
  await fake.start();
});

after(async () => {
  await fake.stop(); // first: it cuts the step still waiting on the gone node, which a stopping kernel would wait for
  for (const k of kernels) await k.stop().catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
});

// Every process of the home uses the one provider. Beats 300 ms apart: a second kernel starting in this same process
// can hold the event loop past three shorter beats on a loaded machine, and the first would be found dead.
const start = async () => {
  const k = await startAgentTestKernel({ fake, home, only: ['workflows', 'error-envelope'], heartbeatMs: 300, feedPollMs: 50 });
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

const runnerOf = (k: TestKernel) => k.kernel.services.view<WorkflowRunner>(workflowRunner.id);

test('a keyed start that finds a run executing on another process answers as soon as that run ends there', { timeout: 30_000 }, async () => {
  const a = await start();
  const b = await start();
  const agent = await spawn(a, 'keyed');
  const id = await createWorkflow(a, { name: 'keyed elsewhere', steps: [{ agent_id: agent }] });
  fake.setFallback({ text: 'done there', delayMs: 1000 });
  const first = await runnerOf(a).start(id, 'go', 'test', 'nodes:feed');
  const found = await runnerOf(b).start(id, 'again', 'test', 'nodes:feed');
  assert.equal(found.run_id, first.run_id, 'the key answers the run the other process executes');
  const result = await first.done;
  const endedAt = Date.now();
  assert.deepEqual(await found.done, result);
  // The fallback poll comes every 5 s: an answer well within that came from the change feed.
  assert.ok(Date.now() - endedAt < 2000, `answered ${Date.now() - endedAt} ms after the run ended`);
  for (const k of kernels.splice(0)) await k.stop();
});

test('waiting for a run executing on another process ends when the waiting module copy stops', { timeout: 30_000 }, async () => {
  const a = await start();
  const b = await start();
  const agent = await spawn(a, 'long-keyed');
  const id = await createWorkflow(a, { name: 'followed', steps: [{ agent_id: agent }] });
  fake.setFallback({ text: 'late', delayMs: 3000 });
  const first = await runnerOf(a).start(id, 'go', 'test', 'nodes:stop');
  const found = await runnerOf(b).start(id, 'again', 'test', 'nodes:stop');
  const rejected = assert.rejects(found.done, (err: Error & { statusCode?: number }) => {
    assert.equal(err.statusCode, 409);
    assert.match(err.message, new RegExp(`the workflows module stopped before run '${first.run_id}' ended`));
    return true;
  });
  assert.equal((await b.kernel.reloadModule('workflows')).ok, true);
  await rejected;
  const run = (await call<{ state: string }>(a, `/api/workflows/runs/${first.run_id}`)).body;
  assert.ok(['Pending', 'Running'].includes(run.state), `the wait ended with the copy, not with the run (${run.state})`);
  assert.equal((await first.done).status, 'completed', 'the run itself goes on');
  for (const k of kernels.splice(0)) await k.stop();
});

test(
  'a second process leaves the first one’s running run alone; when the first node is gone, its run is Failed (interrupted)',
  { timeout: 30_000 },
  async () => {
    const a = await start();
    const agent = await spawn(a, 'slow');
    const id = await createWorkflow(a, { name: 'long', steps: [{ agent_id: agent }] });
    // The step outlasts the test (had it ended before b found a gone, the run would be Completed).
    fake.enqueue({ text: 'late', delayMs: 30_000 });
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
