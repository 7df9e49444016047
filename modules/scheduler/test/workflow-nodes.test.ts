/**
 * Two kernels on one home: the node running a scheduled workflow goes silent (its heartbeat stops, as if killed) after
 * the workflow run was started. The live node takes the scheduled run over and finds that workflow run by the slot's
 * key (failed by the workflows module as interrupted) instead of starting the workflow a second time; the scheduled
 * run ends with its outcome. (A slot whose workflow run was never started finds no run under its key and starts one:
 * modules/workflows/test/start.test.ts.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AGENT_TEST_KEY_ENV, FakeProvider, startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import { call, createJob } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-sched-wf-nodes-'));
const fake = new FakeProvider();
/** A model endpoint that never answers: the workflow's step is still going when its node dies. */
const silent = http.createServer(() => undefined);
const kernels: AgentTestKernel[] = [];
let workflow: string;
type Run = { node: string; state: string; error: string | null };
type WorkflowRun = { id: string; state: string; error: string | null };

before(async () => {
  await fake.start();
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const start = () => startAgentTestKernel({ fake, home, only: ['scheduler', 'workflows', 'error-envelope'], heartbeatMs: 100, feedPollMs: 50 });
  kernels.push(await start());
  // The agent and the workflow exist before the second process starts, so both know them whatever their caches do.
  const base_url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
  const agent = await kernels[0].spawnAgent('stuck', { model: { provider: 'openai', model: 'fake-model', base_url, api_key_env: AGENT_TEST_KEY_ENV } });
  const created = await call<{ workflow_id: string }>(kernels[0], '/api/workflows', {
    method: 'POST',
    json: { name: 'nightly', steps: [{ agent_id: agent, prompt: 'the nightly step' }] },
  });
  workflow = created.body.workflow_id;
  kernels.push(await start());
});

after(async () => {
  for (const k of kernels) await k.stop().catch(() => undefined);
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

test(
  'a scheduled workflow whose run was started before its node died is not run again: the run taken over ends with that run',
  { timeout: 30_000 },
  async () => {
    const at = new Date(Date.now() + 800).toISOString();
    const job = await createJob(kernels[0], { name: 'nightly', workflow_id: workflow, cron: `at ${at}`, prompt: 'go' });
    const runs = async (k: AgentTestKernel) => (await call<Run[]>(k, `/api/schedules/${job.id}/runs`)).body;
    const workflowRuns = async (k: AgentTestKernel) => (await call<WorkflowRun[]>(k, `/api/workflows/${workflow}/runs`)).body;
    const [first] = (await waitFor(
      async () => {
        const list = await runs(kernels[0]);
        return list.length && (await workflowRuns(kernels[0])).length ? list : undefined;
      },
      5000,
      'a node to claim the slot and start the workflow run',
    ))!;
    assert.equal(first.state, 'running');
    const dying = kernels.find((k) => k.kernel.nodes.id === first.node)!;
    const live = kernels.find((k) => k !== dying)!;

    await dying.kernel.nodes.stop();
    const [taken] = (await waitFor(
      async () => {
        const [run] = await runs(live);
        return run?.state === 'error' ? [run] : undefined;
      },
      10_000,
      'the live node to take the run over and record its workflow run',
    ))!;
    const started = await workflowRuns(live);
    assert.equal(started.length, 1, 'the workflow was started once');
    assert.equal(started[0].state, 'Failed');
    assert.match(String(started[0].error), /^interrupted/);
    // Recorded by the live node, or by the process stopped here (its heartbeat only: it goes on, unlike a killed one)
    // when it heard the workflow run end before the live node moved the scheduled run to itself. Once either way.
    assert.ok(
      [live.kernel.nodes.id, dying.kernel.nodes.id].some((id) => id === taken.node),
      taken.node,
    );
    assert.equal((await runs(live)).length, 1);
    assert.match(String(taken.error), new RegExp(`workflow run ${started[0].id} failed: interrupted`));
  },
);
