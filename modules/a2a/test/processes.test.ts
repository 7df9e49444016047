/**
 * A2A tasks with several processes on one home: a task belongs to the process that runs it. A process that starts
 * fails only the running tasks of processes that are gone; those of a process that dies (or stops) later are failed by
 * the live ones when it is found gone, by exactly one of them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, openTestStore, startAgentTestKernel, waitFor, type TestKernel } from '@talon/testing';
import type { Task } from '@a2a-js/sdk';
import { StoreTaskStore } from '../services/task-store.ts';
import { a2aCore } from '../services/sdk.ts';
import { json, spawnAgent, type TaskView } from './helpers.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');

function task(id: string, state: 'TASK_STATE_WORKING' | 'TASK_STATE_COMPLETED'): Task {
  return a2aCore().Task.fromJSON({ id, contextId: 'ctx', status: { state }, history: [], artifacts: [], metadata: { agent_id: 'agent' } });
}

const stateOf = async (tasks: StoreTaskStore, id: string) => a2aCore().taskStateToJSON((await tasks.load(id))!.status!.state);

test('a dead node’s running tasks fail once, by one process; a start fails those of nodes not live, and of none', async () => {
  const opened = openTestStore([moduleDir]);
  try {
    const [nodeA, nodeB, nodeC] = ['node-a', 'node-b', 'node-c'].map((node) => new StoreTaskStore(opened.store, node));
    await nodeA.save(task('a-running', 'TASK_STATE_WORKING'));
    await nodeA.save(task('a-done', 'TASK_STATE_COMPLETED'));
    await nodeB.save(task('b-running', 'TASK_STATE_WORKING'));
    await opened.store.run(
      "INSERT INTO a2a_tasks (id, context_id, state, task, created_at, updated_at) VALUES ('old-running', 'ctx', 'TASK_STATE_WORKING', ?, 'x', 'x')",
      [JSON.stringify(a2aCore().Task.toJSON(task('old-running', 'TASK_STATE_WORKING')))],
    );

    // Both live processes take over node A at once: one of them fails its task.
    const taken = await Promise.all([nodeB.takeOver('node-a'), nodeC.takeOver('node-a')]);
    assert.deepEqual(taken.sort(), [0, 1]);
    assert.equal(await stateOf(nodeB, 'a-running'), 'TASK_STATE_FAILED', 'the stored task says failed, not only the column');
    assert.equal(await stateOf(nodeB, 'a-done'), 'TASK_STATE_COMPLETED');
    assert.equal(await stateOf(nodeB, 'b-running'), 'TASK_STATE_WORKING', "another node's task is left alone");

    // A start with B live: the task saved before nodes were recorded fails, B's keeps running.
    assert.equal(await nodeC.sweep(['node-b', 'node-c']), 1);
    assert.equal(await stateOf(nodeC, 'old-running'), 'TASK_STATE_FAILED');
    assert.equal(await stateOf(nodeC, 'b-running'), 'TASK_STATE_WORKING');
    // With B gone too, its task fails.
    assert.equal(await nodeC.sweep(['node-c']), 1);
    assert.equal(await stateOf(nodeC, 'b-running'), 'TASK_STATE_FAILED');
  } finally {
    opened.close();
  }
});

test('a second process leaves the first one’s running task alone; when the first stops, the second fails it', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-a2a-two-'));
  const fake = new FakeProvider();
  await fake.start();
  const options = { fake, only: ['agents', 'auth', 'error-envelope', 'a2a'], home, heartbeatMs: 200, feedPollMs: 50 };
  let a: TestKernel | undefined;
  let b: TestKernel | undefined;
  try {
    a = await startAgentTestKernel(options);
    const agentId = await spawnAgent(a, 'runner');
    fake.enqueue({ text: 'never sent', delayMs: 4000 });
    const sent = await a.request('/a2a/tasks/send', { method: 'POST', json: { agent_id: agentId, message: 'slow', blocking: false } });
    const running = await json<TaskView>(sent);
    const status = (k: TestKernel) => k.request(`/a2a/tasks/${running.task_id}`).then((res) => json<TaskView>(res));
    await waitFor(async () => (await status(a!)).status === 'working', 3000, 'the task to run');

    b = await startAgentTestKernel(options);
    assert.equal((await status(b)).status, 'working', 'the starting process did not fail a live process’s task');

    await a.stop();
    a = undefined;
    await waitFor(async () => (await status(b!)).status === 'failed', 5000, 'the stopped process’s task to be failed by the other');
  } finally {
    await a?.stop();
    await b?.stop();
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
