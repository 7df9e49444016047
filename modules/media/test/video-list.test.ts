/**
 * GET /api/media/video (the dashboard's list of video tasks), on a test kernel with the scripted driver: newest first,
 * each task as its own route answers it plus prompt and created_at, limit/offset with the total, and a 400 naming a
 * bad limit or offset.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import type { VideoTaskView } from '@talon/media';
import { clearProviderEnv, videoKernelOptions } from './video-setup.ts';

clearProviderEnv();

type Listed = VideoTaskView & { prompt: string; created_at: string };
interface List {
  tasks: Listed[];
  total: number;
  limit: number;
  offset: number;
}

let k: TestKernel;
before(async () => {
  k = await startTestKernel(videoKernelOptions());
});
after(() => k?.stop());

async function submit(prompt: string): Promise<string> {
  const res = await k.request('/api/media/video', { method: 'POST', json: { prompt, provider: 'scripted' } });
  assert.equal(res.status, 202, await res.clone().text());
  return ((await res.json()) as { task_id: string }).task_id;
}

async function list(query = ''): Promise<List> {
  const res = await k.request(`/api/media/video${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as List;
}

const view = async (id: string) => (await (await k.request(`/api/media/video/${id}`)).json()) as VideoTaskView;

test('an empty list, then the tasks newest first, each as its own route answers it plus prompt and created_at', async () => {
  assert.deepEqual(await list(), { tasks: [], total: 0, limit: 20, offset: 0 });
  const done = await submit('the first one polls=1');
  await waitFor(async () => (await view(done)).status === 'completed', 10_000, 'the first task completed');
  const before = Date.now();
  const slow = await submit('the second one polls=1000');
  const got = await list();
  assert.equal(got.total, 2);
  assert.deepEqual(
    got.tasks.map((t) => t.task_id),
    [slow, done],
    'newest first',
  );
  const [second, first] = got.tasks;
  const { prompt, created_at, ...firstView } = first!;
  assert.equal(prompt, 'the first one polls=1');
  assert.deepEqual(firstView, await view(done), 'the same view as GET /api/media/video/{task_id}');
  assert.equal(firstView.result?.file_url, `/api/uploads/${firstView.result?.file_id}`);
  assert.ok(Date.parse(created_at) <= before);
  assert.equal(second!.status, 'processing');
  assert.ok(Math.abs(Date.parse(second!.created_at) - before) < 5_000, 'created_at is when it was submitted (ISO time)');
  await k.request(`/api/media/video/${slow}`, { method: 'DELETE' });
  assert.equal((await list()).tasks[0]!.status, 'cancelled');
});

test('limit and offset page through the tasks; the total counts them all', async () => {
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await submit(`paged ${i} polls=1000`));
  const all = await list('?limit=100');
  assert.equal(all.total, all.tasks.length);
  const page = await list('?limit=2&offset=1');
  assert.deepEqual(
    page.tasks.map((t) => t.task_id),
    all.tasks.slice(1, 3).map((t) => t.task_id),
  );
  assert.equal(page.total, all.total);
  assert.deepEqual([page.limit, page.offset], [2, 1]);
  assert.deepEqual((await list(`?offset=${all.total}`)).tasks, []);
  for (const id of ids) await k.request(`/api/media/video/${id}`, { method: 'DELETE' });
});

test('a bad limit or offset is a 400 naming it', async () => {
  for (const [query, field] of [
    ['?limit=0', /limit/],
    ['?limit=101', /limit/],
    ['?limit=ten', /limit/],
    ['?offset=-1', /offset/],
    ['?offset=1.5', /offset/],
    ['?offset=1e20', /offset.*0 to 1000000000/],
    ['?offset=1000000001', /offset/],
  ] as const) {
    const res = await k.request(`/api/media/video${query}`);
    const body = (await res.json()) as { error: string };
    assert.equal(res.status, 400, `${query}: ${JSON.stringify(body)}`);
    assert.match(body.error, field, query);
  }
});
