/**
 * Video tasks over HTTP, on a test kernel with the media module and the scripted driver (test/fixtures/modules/
 * media-scripted): the spec's shapes, the file served from the upload store, failure, deadline, cancel, and the
 * routes' 400/404/409 answers. Restarts and several processes are in video-restart.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { eventChannel, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { mediaEvents, type VideoTaskView } from '@talon/media';
import { clearProviderEnv, count, sampleMp4, scriptedCalls, videoKernelOptions } from './video-setup.ts';

clearProviderEnv();

let k: TestKernel;
before(async () => {
  k = await startTestKernel(videoKernelOptions());
});
after(() => k?.stop());

async function submit(prompt: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await k.request('/api/media/video', { method: 'POST', json: { prompt, provider: 'scripted', ...extra } });
  assert.equal(res.status, 202, await res.clone().text());
  const body = (await res.json()) as { task_id: string; provider: string };
  assert.equal(body.provider, 'scripted');
  return body.task_id;
}

/** Submits and names the provider's task id too (the last submission in the driver's log: the tests run one at a time). */
async function submitTracked(prompt: string): Promise<{ id: string; task: string }> {
  const id = await submit(prompt);
  const task = scriptedCalls(k.home)
    .filter((c) => c.op === 'submit')
    .at(-1)!.task;
  return { id, task };
}
const callsOf = (task: string) => scriptedCalls(k.home).filter((c) => c.task === task);

const view = async (id: string, query = ''): Promise<VideoTaskView> => (await (await k.request(`/api/media/video/${id}${query}`)).json()) as VideoTaskView;
const until = (id: string, status: VideoTaskView['status']) =>
  waitFor(async () => ((await view(id)).status === status ? view(id) : undefined), 10_000, `task ${status}`);

test('submit → 202 {task_id, provider}; processing with progress; completed with the spec result; the file is served as video/mp4', async () => {
  const events = eventChannel(k.kernel.events, mediaEvents);
  const seen: Array<{ status: string; progress?: number; file_url?: string }> = [];
  events.subscribe('media.video_task', (e) => void seen.push(e.data));
  try {
    const id = await submit('a sunrise polls=3 delay_ms=30', { duration_secs: 5 });
    assert.match(id, /^[0-9a-f-]{36}$/);
    const processing = await waitFor(async () => {
      const v = await view(id);
      return v.status === 'processing' && v.progress !== undefined ? v : undefined;
    });
    assert.deepEqual(Object.keys(processing).sort(), ['progress', 'provider', 'status', 'task_id']);
    const done = await until(id, 'completed');
    const fileId = done.result!.file_id;
    assert.deepEqual(done, {
      status: 'completed',
      task_id: id,
      provider: 'scripted',
      result: { file_url: `/api/uploads/${fileId}`, file_id: fileId, width: 160, height: 90, duration_secs: 1, provider: 'scripted', model: 'scripted-1' },
    });
    const file = await k.request(done.result!.file_url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await file.arrayBuffer()), readFileSync(sampleMp4));
    await waitFor(() => seen.some((e) => e.status === 'completed'));
    assert.deepEqual(
      seen.map((e) => e.status),
      ['processing', 'processing', 'processing', 'processing', 'completed'],
      'submitted, three progress events, completed',
    );
    assert.deepEqual(
      seen.slice(1, 4).map((e) => e.progress),
      [25, 50, 75],
    );
    assert.equal(seen.at(-1)?.file_url, done.result!.file_url);
    const metered = scriptedCalls(k.home).filter((c) => c.op === 'metered' && c.task === id);
    assert.deepEqual(
      metered.map((c) => [c.record?.units, c.record?.unit, c.record?.ok]),
      [[1, 'seconds', true]],
      'metered once, in seconds of video',
    );
  } finally {
    events.close();
  }
});

test('without sizes from the provider, width, height and duration are measured from the file', async () => {
  const done = await until(await submit('measure me polls=0 sizes=0'), 'completed');
  assert.deepEqual([done.result?.width, done.result?.height], [160, 90]);
  assert.ok(Math.abs((done.result?.duration_secs ?? 0) - 1) < 0.1, `duration ${done.result?.duration_secs}`);
});

test("the provider's failure: failed with its reason", async () => {
  const id = await submit('doomed polls=1 outcome=failed error=content-policy');
  assert.deepEqual(await until(id, 'failed'), { status: 'failed', task_id: id, provider: 'scripted', error: 'content-policy' });
});

test('a result that is no video (an HTML page) fails the task instead of being served', async () => {
  const failed = await until(await submit('html polls=0 bytes=html'), 'failed');
  assert.match(failed.error ?? '', /refused/);
});

test('a task past its deadline fails with "timed out after N min" and is cancelled at the provider', async () => {
  const { id, task } = await submitTracked('forever polls=100000');
  await waitFor(() => count(callsOf(task), 'poll-end') >= 1);
  const now = Date.now();
  await k.kernel.store.run('UPDATE media_video_tasks SET created_at = ?, deadline_at = ? WHERE task_id = ?', [now - 30 * 60_000, now - 1, id]);
  assert.deepEqual(await until(id, 'failed'), { status: 'failed', task_id: id, provider: 'scripted', error: 'timed out after 30 min' });
  await waitFor(() => count(callsOf(task), 'cancel') === 1, 5000, "the provider's cancel");
});

test('DELETE cancels; the task stays cancelled although the provider then completes it; DELETE again answers the same', async () => {
  const { id, task } = await submitTracked('cancel me polls=0 delay_ms=400');
  await waitFor(() => count(callsOf(task), 'poll-start') === 1, 5000, 'the poll to begin');
  const del = await k.request(`/api/media/video/${id}`, { method: 'DELETE' });
  assert.equal(del.status, 200);
  const cancelled = { status: 'cancelled', task_id: id, provider: 'scripted', error: 'cancelled on request' };
  assert.deepEqual(await del.json(), cancelled);
  await waitFor(() => count(callsOf(task), 'completed') === 1, 5000, 'the provider to complete');
  await waitFor(() => count(callsOf(task), 'poll-end') === 1);
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(await view(id), cancelled);
  assert.deepEqual(await (await k.request(`/api/media/video/${id}`, { method: 'DELETE' })).json(), cancelled);
  assert.equal(count(callsOf(task), 'cancel'), 1, "the provider's cancel, once");
  assert.equal(count(callsOf(task), 'poll-start'), 1, 'a cancelled task is not polled again');
});

test('DELETE of a completed task → 409', async () => {
  const id = await submit('quick polls=0');
  await until(id, 'completed');
  const res = await k.request(`/api/media/video/${id}`, { method: 'DELETE' });
  assert.equal(res.status, 409);
  assert.match(((await res.json()) as { error: string }).error, /already completed/);
});

test('an unknown task → 404 (GET and DELETE, a UUID or not)', async () => {
  for (const id of ['7d4f3b4e-1b0e-4c7a-9d43-5e0f7e2d9c11', 'not-a-task']) {
    for (const method of ['GET', 'DELETE']) {
      const res = await k.request(`/api/media/video/${id}`, { method });
      assert.equal(res.status, 404, `${method} ${id}`);
      assert.match(((await res.json()) as { error: string }).error, /no video task/);
    }
  }
});

test("?provider= is checked against the task's provider (400 naming both); it may be left out", async () => {
  const id = await submit('which polls=1000');
  assert.equal((await k.request(`/api/media/video/${id}?provider=scripted`)).status, 200);
  assert.equal((await k.request(`/api/media/video/${id}`)).status, 200);
  const res = await k.request(`/api/media/video/${id}?provider=minimax`);
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /provider 'minimax' is not the provider of video task .* \(it is 'scripted'\)/);
  await k.request(`/api/media/video/${id}`, { method: 'DELETE' });
});

test('bad bodies → 400 naming the field', async () => {
  const cases: Array<[unknown, RegExp]> = [
    [{}, /prompt/],
    [{ prompt: '' }, /prompt/],
    [{ prompt: '   ' }, /prompt/],
    [{ prompt: 'x'.repeat(2001) }, /prompt/],
    [{ prompt: 42 }, /prompt/],
    [{ prompt: 'ok', duration_secs: 0 }, /duration_secs/],
    [{ prompt: 'ok', duration_secs: 61 }, /duration_secs/],
    [{ prompt: 'ok', duration_secs: 2.5 }, /duration_secs/],
    [{ prompt: 'ok', duration_secs: '5' }, /duration_secs/],
    [{ prompt: 'ok', provider: 7 }, /provider/],
    [{ prompt: 'ok', model: '' }, /model/],
  ];
  for (const [json, field] of cases) {
    const res = await k.request('/api/media/video', { method: 'POST', json });
    const body = (await res.json()) as { error: string };
    assert.equal(res.status, 400, JSON.stringify(json));
    assert.match(body.error, field, `${JSON.stringify(json).slice(0, 60)} → ${body.error}`);
  }
  const none = await k.request('/api/media/video', { method: 'POST' });
  assert.equal(none.status, 400, 'no body');
  assert.match(((await none.json()) as { error: string }).error, /prompt/);
  const extra = await k.request('/api/media/video', { method: 'POST', json: { prompt: 'ok', resolution: '1080p' } });
  assert.equal(extra.status, 400);
  assert.match(((await extra.json()) as { error: string }).error, /resolution|additional/);
});

test("the provider's refusal of a submission → 400 with its reason, and no task", async () => {
  const before = count(scriptedCalls(k.home), 'submit');
  const res = await k.request('/api/media/video', { method: 'POST', json: { prompt: 'no submit=refuse', provider: 'scripted' } });
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /scripted refusal/);
  assert.equal(count(scriptedCalls(k.home), 'submit'), before);
});
