import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventOf } from '@talon/module-sdk';
import { taskEvents } from '@talon/tasks';
import { eventChannel, waitFor } from '@talon/testing';
import { call, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type Task = Record<string, unknown> & { id: string; status: string };

describe('tasks: the board over HTTP', () => {
  let env: Env;
  let worker: string;
  const events: EventOf<typeof taskEvents>[] = [];
  before(async () => {
    env = await startEnv();
    eventChannel(env.k.kernel.events, taskEvents).subscribe('task.*', (e) => void events.push(e));
    worker = await spawn(env.k, 'worker');
  });
  after(() => stopEnv(env));

  test('POST /api/comms/task → 201 {ok, task_id}; the task is pending with every field; task.posted is published', async () => {
    const res = await call<{ ok: boolean; task_id: string; status: string }>(env.k, '/api/comms/task', {
      method: 'POST',
      json: { title: 'Write the report', description: 'Q3 numbers', assigned_to: 'worker' },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.ok, true);
    assert.equal(res.body.status, 'pending');
    const task = (await call<Task>(env.k, `/api/tasks/${res.body.task_id}`)).body;
    assert.deepEqual(Object.keys(task).sort(), [
      'assigned_to',
      'claimed_at',
      'completed_at',
      'created_at',
      'created_by',
      'description',
      'id',
      'result',
      'retry_count',
      'status',
      'title',
    ]);
    assert.equal(task.assigned_to, 'worker');
    assert.equal(task.created_by, 'api');
    assert.equal(task.retry_count, 0);
    const posted = await waitFor(() => events.find((e) => e.type === 'task.posted' && e.data.taskId === res.body.task_id), 2000, 'task.posted');
    assert.deepEqual(posted!.data, { taskId: res.body.task_id, title: 'Write the report', assignedTo: 'worker', createdBy: 'api' });
  });

  test('bad posts: no title, a blank title, an unknown field, an unknown assignee, no body', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ description: 'x' }, 400, /title/],
      [{ title: '   ' }, 400, /title/],
      [{ title: 't', colour: 'red' }, 400, /unknown property 'colour'/],
      [{ title: 't', assigned_to: 'nobody-here' }, 404, /nobody-here/],
    ];
    for (const [json, status, error] of cases) {
      const res = await call<{ error: string }>(env.k, '/api/comms/task', { method: 'POST', json });
      assert.equal(res.status, status, JSON.stringify(json));
      assert.match(res.body.error, error);
    }
    const empty = await call<{ error: string }>(env.k, '/api/comms/task', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    assert.equal(empty.status, 400);
  });

  test('status counts by state; list filters by status, newest first; a bad status is a 400', async () => {
    const a = (await call<Task>(env.k, '/api/tasks', { method: 'POST', json: { title: 'first' } })).body;
    const b = (await call<Task>(env.k, '/api/tasks', { method: 'POST', json: { title: 'second' } })).body;
    await call(env.k, `/api/tasks/${a.id}`, { method: 'DELETE' });
    const status = (await call<Record<string, number>>(env.k, '/api/tasks/status')).body;
    assert.deepEqual(Object.keys(status).sort(), ['cancelled', 'completed', 'failed', 'in_progress', 'pending', 'total']);
    assert.equal(status.cancelled, 1);
    assert.equal(status.total, status.pending + status.in_progress + status.completed + status.failed + status.cancelled);
    const pending = (await call<{ tasks: Task[]; total: number }>(env.k, '/api/tasks/list?status=pending')).body;
    assert.ok(pending.tasks.every((t) => t.status === 'pending'));
    assert.equal(pending.total, status.pending);
    const ids = pending.tasks.map((t) => t.id);
    assert.equal(ids[0], b.id, 'newest first');
    assert.equal((await call(env.k, '/api/tasks/list?status=sleeping')).status, 400);
  });

  test('DELETE cancels (the task stays, status cancelled); again → 409; unknown → 404; not a UUID → 400', async () => {
    const t = (await call<Task>(env.k, '/api/tasks', { method: 'POST', json: { title: 'to cancel' } })).body;
    const res = await call<{ status: string; task: Task }>(env.k, `/api/tasks/${t.id}`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'cancelled');
    assert.equal((await call<Task>(env.k, `/api/tasks/${t.id}`)).body.status, 'cancelled');
    assert.equal((await call(env.k, `/api/tasks/${t.id}`, { method: 'DELETE' })).status, 409);
    assert.equal((await call(env.k, '/api/tasks/00000000-0000-4000-8000-000000000000', { method: 'DELETE' })).status, 404);
    assert.equal((await call(env.k, '/api/tasks/nope', { method: 'DELETE' })).status, 400);
    const done = await waitFor(() => events.find((e) => e.type === 'task.completed' && e.data.taskId === t.id), 2000, 'task.completed');
    assert.equal((done!.data as { status: string }).status, 'cancelled');
  });

  test('retry puts a cancelled task back to pending (retry_count + 1); a pending one → 409; unknown → 404', async () => {
    const t = (await call<Task>(env.k, '/api/tasks', { method: 'POST', json: { title: 'again' } })).body;
    assert.equal((await call(env.k, `/api/tasks/${t.id}/retry`, { method: 'POST' })).status, 409);
    await call(env.k, `/api/tasks/${t.id}`, { method: 'DELETE' });
    const res = await call<{ status: string; task: Task }>(env.k, `/api/tasks/${t.id}/retry`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'retried');
    assert.equal(res.body.task.status, 'pending');
    assert.equal(res.body.task.retry_count, 1);
    assert.equal((await call(env.k, '/api/tasks/00000000-0000-4000-8000-000000000000/retry', { method: 'POST' })).status, 404);
  });

  test('an agent posts, claims and completes with its tools; the result and times are kept', async () => {
    const t = (await call<Task>(env.k, '/api/tasks', { method: 'POST', json: { title: 'summarise', assigned_to: worker } })).body;
    env.fake.enqueue(
      { toolCalls: [{ name: 'task_claim', input: { task_id: t.id } }] },
      { toolCalls: [{ name: 'task_complete', input: { task_id: t.id, result: 'all done' } }] },
      { toolCalls: [{ name: 'task_post', input: { title: 'follow-up', assigned_to: 'worker' } }] },
      { text: 'finished' },
    );
    const turn = await call(env.k, `/api/agents/${worker}/message`, { method: 'POST', json: { message: 'work' } });
    assert.equal(turn.status, 200);
    const done = (await call<Task>(env.k, `/api/tasks/${t.id}`)).body;
    assert.equal(done.status, 'completed');
    assert.equal(done.result, 'all done');
    assert.equal(done.assigned_to, worker);
    assert.ok(done.claimed_at && done.completed_at);
    const follow = (await call<{ tasks: Task[] }>(env.k, '/api/tasks/list?status=pending')).body.tasks.find((x) => x.title === 'follow-up');
    assert.equal(follow?.created_by, worker);
    const claimed = events.find((e) => e.type === 'task.claimed' && e.data.taskId === t.id);
    assert.deepEqual(claimed?.data, { taskId: t.id, title: 'summarise', agentId: worker });
  });

  test('a task claimed by another agent cannot be completed by this one (the model reads the refusal)', async () => {
    const other = await spawn(env.k, 'other');
    const t = (await call<Task>(env.k, '/api/tasks', { method: 'POST', json: { title: 'owned', assigned_to: other } })).body;
    env.fake.enqueue({ toolCalls: [{ name: 'task_claim', input: { task_id: t.id } }] }, { text: 'ok' });
    await call(env.k, `/api/agents/${other}/message`, { method: 'POST', json: { message: 'claim' } });
    env.fake.enqueue({ toolCalls: [{ name: 'task_complete', input: { task_id: t.id, result: 'stolen' } }] }, { text: 'ok' });
    await call(env.k, `/api/agents/${worker}/message`, { method: 'POST', json: { message: 'complete' } });
    const last = env.fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    assert.match(String(last.at(-1)?.content), /only the agent that claimed it/);
    assert.equal((await call<Task>(env.k, `/api/tasks/${t.id}`)).body.status, 'in_progress');
    // Killing the claimer gives the task back to the board.
    await call(env.k, `/api/agents/${other}`, { method: 'DELETE' });
    await waitFor(async () => (await call<Task>(env.k, `/api/tasks/${t.id}`)).body.status === 'pending', 2000, 'release');
  });

  test('GET /api/queue/status: depth, running, throughput per minute and every lane with its cap', async () => {
    const res = await call<Record<string, unknown> & { lanes: Array<Record<string, unknown>> }>(env.k, '/api/queue/status');
    assert.equal(res.status, 200);
    for (const key of ['depth', 'running', 'throughput_per_minute']) assert.equal(typeof res.body[key], 'number', key);
    const status = (await call<Record<string, number>>(env.k, '/api/tasks/status')).body;
    assert.equal(res.body.depth, status.pending);
    assert.ok((res.body.throughput_per_minute as number) >= 1, 'the completed task counts');
    assert.deepEqual(
      res.body.lanes.map((l) => l.lane),
      ['schedule', 'trigger', 'workflow', 'task'],
    );
    assert.deepEqual(res.body.lanes[0], { lane: 'schedule', active: 0, queued: 0, capacity: 4, completed: 0 });
    assert.deepEqual(
      res.body.lanes.map((l) => l.capacity),
      [4, 8, 32, 4],
    );
  });
});

describe('tasks: claims that time out', () => {
  let env: Env;
  before(async () => {
    env = await startEnv('[tasks]\nclaim_timeout_secs = 1\nmax_retries = 2\n');
  });
  after(() => stopEnv(env));

  test('a claim not completed in time returns the task to pending for its assignee; after max_retries it fails', async () => {
    const a = await spawn(env.k, 'slowpoke');
    const t = (await call<Task>(env.k, '/api/tasks', { method: 'POST', json: { title: 'slow', assigned_to: 'slowpoke' } })).body;
    for (let round = 1; round <= 3; round++) {
      env.fake.enqueue({ toolCalls: [{ name: 'task_claim', input: {} }] }, { text: 'claimed' });
      await call(env.k, `/api/agents/${a}/message`, { method: 'POST', json: { message: 'claim' } });
      assert.equal((await call<Task>(env.k, `/api/tasks/${t.id}`)).body.status, 'in_progress');
      const after = await waitFor(
        async () => {
          const task = (await call<{ tasks: Task[] }>(env.k, '/api/tasks/list')).body.tasks.find((x) => x.id === t.id)!;
          return task.status !== 'in_progress' && task;
        },
        5000,
        `the claim of round ${round} to time out`,
      );
      if (round < 3) {
        assert.equal(after.status, 'pending', `round ${round}`);
        assert.equal(after.assigned_to, 'slowpoke');
        assert.equal(after.retry_count, round);
      } else {
        assert.equal(after.status, 'failed');
        assert.match(String(after.result), /timed out 3 times/);
      }
    }
  });
});
