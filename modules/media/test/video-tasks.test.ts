/**
 * The durable video tasks at unit level: the store, the poller and the task ends on a real SQLite file, with a driver
 * the test scripts and the module's other services stubbed. Two pollers with different node ids on one file stand
 * for two processes. The HTTP routes, the real upload store and restarts are in video.test.ts.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { openTestStore, waitFor, type TestStore } from '@talon/testing';
import type { StoredFile, UploadFiles } from '@talon/agents';
import type { MediaCallRecord, MediaDriver, VideoPoll } from '@talon/media';
import { createVideoTasks, type VideoConfig, type VideoDeps, type VideoTasks } from '../services/video/index.ts';
import { pollDelayMs } from '../services/video/poller.ts';
import { VideoTaskStore } from '../services/video/store.ts';
import { mediaError } from '../services/kit/errors.ts';
import { createKit } from '../services/kit/index.ts';
import { VideoGate } from '../services/video/gate.ts';
import type { CatalogService } from '@talon/catalog';
import type { NetFetch } from '@talon/net';

for (const key of Object.keys(process.env)) if (/_API_KEY$|^GOOGLE_CLOUD|^MINIMAX_/.test(key)) delete process.env[key];

const moduleDir = path.resolve(import.meta.dirname, '..');
const fast: VideoConfig = { video_timeout_secs: 5, video_deadline_mins: 30, video_poll_first_secs: 0.02, video_poll_factor: 1, video_poll_max_secs: 0.02 };
const VIDEO = Buffer.from('00000018667479706d703432', 'hex');

interface Scripted {
  driver: MediaDriver;
  polls: string[];
  /** When each poll began. */
  at: number[];
  cancels: string[];
  /** Polls of one task running at the same time, at most. */
  maxConcurrent: number;
}

/** A driver whose poll answers come from `answer(n)` (n: the task's poll number, from 1); a poll takes `delayMs`. */
function scripted(answer: (n: number) => VideoPoll, delayMs = 0): Scripted {
  const s: Scripted = { polls: [], at: [], cancels: [], maxConcurrent: 0, driver: undefined as unknown as MediaDriver };
  let running = 0;
  s.driver = {
    name: 'scripted',
    capabilities: () => ['VideoGeneration'],
    configured: () => true,
    setupHint: () => '',
    submitVideo: async (r) => {
      if (r.prompt === 'refuse') throw mediaError('refused', 'no such prompt', { provider: 'scripted' });
      return { providerTaskId: `p-${randomUUID()}`, model: 'm-1' };
    },
    pollVideo: async (id, signal) => {
      s.polls.push(id);
      s.at.push(Date.now());
      running++;
      s.maxConcurrent = Math.max(s.maxConcurrent, running);
      try {
        if (delayMs) await sleep(delayMs, undefined, { signal });
        return answer(s.polls.filter((p) => p === id).length);
      } finally {
        running--;
      }
    },
    cancelVideo: async (id) => void s.cancels.push(id),
  };
  return s;
}

interface Harness {
  tasks: VideoTasks;
  events: Array<{ type: string; data: Record<string, unknown> }>;
  metered: MediaCallRecord[];
  saved: Buffer[];
  stop(): Promise<void>;
}

const opened: TestStore[] = [];
const running: Harness[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((h) => h.stop()));
  for (const s of opened.splice(0)) s.close();
});

function store(): TestStore {
  const s = openTestStore([moduleDir]);
  opened.push(s);
  return s;
}

/** One "process": the video tasks on the store with this node id, its poller running. */
interface StartOptions {
  node?: string;
  config?: Partial<VideoConfig>;
  leaseMs?: number;
  poll?: boolean;
  /** The process's video gate (shared with a kit the driver downloads through). */
  gate?: VideoGate;
  /** Called as a video is stored (the upload store's write). */
  onSave?: () => Promise<void>;
}

function start(db: TestStore, driver: MediaDriver, options: StartOptions = {}): Harness {
  const events: Harness['events'] = [];
  const metered: MediaCallRecord[] = [];
  const saved: Buffer[] = [];
  // ctx.track and ctx.signal: stop() aborts the signal and waits for the tracked work, as the kernel does.
  const tracked: Array<Promise<unknown>> = [];
  const abort = new AbortController();
  const files: UploadFiles = {
    async saveGenerated(input): Promise<StoredFile> {
      if (input.bytes.subarray(0, 1).toString() === '<') throw Object.assign(new Error('the bytes are text/html, not a video'), { name: 'FileRefused' });
      await options.onSave?.();
      saved.push(input.bytes);
      const file_id = randomUUID();
      return { file_id, url: `/api/uploads/${file_id}`, content_type: 'video/mp4', filename: `${input.name}.mp4`, size: input.bytes.length };
    },
    read: async () => undefined,
    describe: async () => undefined,
  };
  const deps: VideoDeps = {
    store: db.store,
    nodes: { id: options.node ?? randomUUID(), leaseMs: options.leaseMs ?? 2000, active: true },
    config: () => ({ ...fast, ...options.config }),
    log: pino({ level: 'silent' }),
    driver: (name) => (name === driver.name ? driver : undefined),
    files: () => files,
    probe: async () => ({ format: 'mp4', width: 640, height: 360, durationMs: 4000 }),
    afterCall: async (record) => void metered.push(record),
    events: {
      publish: (type, data) => {
        events.push({ type, data: data as Record<string, unknown> });
        return { type, data, at: new Date().toISOString(), source: 'media' } as never;
      },
      subscribe: () => () => undefined,
    },
    gate: options.gate ?? new VideoGate(),
    track: (work) => {
      tracked.push(work);
      return work;
    },
    signal: abort.signal,
  };
  const tasks = createVideoTasks(deps);
  const loop = options.poll === false ? Promise.resolve() : tasks.run(abort.signal);
  const h: Harness = {
    tasks,
    events,
    metered,
    saved,
    async stop() {
      abort.abort();
      await Promise.allSettled([loop, ...tracked]);
    },
  };
  running.push(h);
  return h;
}

const statusOf = async (h: Harness, id: string) => (await h.tasks.view(id))?.status;

test('the backoff: the first wait, then ×factor, capped at the longest wait', () => {
  const config: VideoConfig = { ...fast, video_poll_first_secs: 5, video_poll_factor: 1.5, video_poll_max_secs: 60 };
  assert.deepEqual(
    [0, 1, 2, 3, 7, 20].map((n) => pollDelayMs(config, n)),
    [5000, 7500, 11250, 16875, 60000, 60000],
  );
});

test('submit commits the task before answering; processing polls report progress; completed stores, measures and meters once', async () => {
  const s = scripted((n) => (n < 3 ? { state: 'processing', progress: n * 30 } : { state: 'completed', video: VIDEO, model: 'm-2' }));
  const db = store();
  const h = start(db, s.driver, { poll: false });
  const { task_id, provider } = await h.tasks.submit(s.driver, { prompt: 'a cat', duration_secs: 4 }, { agentId: 'agent-1' });
  assert.equal(provider, 'scripted');
  assert.deepEqual(await h.tasks.view(task_id), { status: 'processing', task_id, provider: 'scripted' }, 'committed before the answer');
  const poller = start(db, s.driver);
  await waitFor(async () => (await statusOf(poller, task_id)) === 'completed', 5000);
  const view = await h.tasks.view(task_id);
  assert.equal(view?.result?.model, 'm-2');
  assert.deepEqual(
    { w: view?.result?.width, h: view?.result?.height, d: view?.result?.duration_secs },
    { w: 640, h: 360, d: 4 },
    'measured (probe) when the provider gave no sizes',
  );
  assert.equal(view?.result?.file_url, `/api/uploads/${view?.result?.file_id}`);
  assert.deepEqual(poller.saved, [VIDEO]);
  assert.deepEqual(
    poller.events.filter((e) => e.type === 'media.video_task').map((e) => [e.data.status, e.data.progress]),
    [
      ['processing', 30],
      ['processing', 60],
      ['completed', 100],
    ],
  );
  assert.equal(poller.events.find((e) => e.type === 'media.generated')?.data.kind, 'video');
  assert.deepEqual(
    poller.metered.map((r) => ({ kind: r.kind, units: r.units, unit: r.unit, ok: r.ok, agentId: r.agentId, taskId: r.taskId, model: r.model })),
    [{ kind: 'video', units: 4, unit: 'seconds', ok: true, agentId: 'agent-1', taskId: task_id, model: 'm-2' }],
  );
  assert.equal(s.polls.length, 3, 'a completed task is not polled again');
  await sleep(100);
  assert.equal(s.polls.length, 3);
});

test("a provider's sizes are kept as given (no probe)", async () => {
  const s = scripted(() => ({ state: 'completed', video: VIDEO, width: 1280, height: 720, durationSecs: 6, model: 'm' }));
  const h = start(store(), s.driver);
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => (await statusOf(h, task_id)) === 'completed', 5000);
  const r = (await h.tasks.view(task_id))?.result;
  assert.deepEqual([r?.width, r?.height, r?.duration_secs], [1280, 720, 6]);
});

test('a refused submission commits nothing', async () => {
  const s = scripted(() => ({ state: 'processing' }));
  const db = store();
  const h = start(db, s.driver, { poll: false });
  await assert.rejects(h.tasks.submit(s.driver, { prompt: 'refuse' }), (err: Error) => err.name === 'MediaError');
  assert.equal((await db.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM media_video_tasks'))?.n, 0);
});

test("the provider's failure ends the task failed with its reason, metered as not ok", async () => {
  const s = scripted(() => ({ state: 'failed', error: 'content policy' }));
  const h = start(store(), s.driver);
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => (await statusOf(h, task_id)) === 'failed', 5000);
  assert.deepEqual(await h.tasks.view(task_id), { status: 'failed', task_id, provider: 'scripted', error: 'content policy' });
  assert.deepEqual(
    h.metered.map((r) => [r.ok, r.units, r.error]),
    [[false, 0, 'content policy']],
  );
});

test('bytes the upload store refuses (an HTML page) fail the task, naming why', async () => {
  const s = scripted(() => ({ state: 'completed', video: Buffer.from('<html>oops</html>'), model: 'm' }));
  const h = start(store(), s.driver);
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => (await statusOf(h, task_id)) === 'failed', 5000);
  assert.match((await h.tasks.view(task_id))?.error ?? '', /refused: the bytes are text\/html/);
});

test('past its deadline a task fails with "timed out after N min" and the provider is asked to cancel it', async () => {
  const s = scripted(() => ({ state: 'processing' }));
  const db = store();
  const h = start(db, s.driver);
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => s.polls.length >= 2, 5000);
  const now = Date.now();
  await db.store.run('UPDATE media_video_tasks SET created_at = ?, deadline_at = ? WHERE task_id = ?', [now - 30 * 60_000, now - 1, task_id]);
  await waitFor(async () => (await statusOf(h, task_id)) === 'failed', 5000);
  assert.equal((await h.tasks.view(task_id))?.error, 'timed out after 30 min');
  assert.equal(s.cancels.length, 1);
  assert.deepEqual(
    h.events.filter((e) => e.data.status === 'failed').map((e) => e.data.error),
    ['timed out after 30 min'],
  );
});

test('a poll error counts an attempt and backs off; a 429 waits at least its Retry-After; then the task goes on', async () => {
  const s = scripted((n) => {
    if (n === 1) throw mediaError('rate_limited', 'slow down', { provider: 'scripted', retryAfterMs: 400 });
    if (n === 2) throw mediaError('outage', 'bad gateway', { provider: 'scripted' });
    return { state: 'completed', video: VIDEO, model: 'm' };
  });
  const db = store();
  const h = start(db, s.driver);
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'x' });
  const row = () => db.store.one<{ attempts: number; error: string }>('SELECT attempts, error FROM media_video_tasks WHERE task_id = ?', [task_id]);
  await waitFor(async () => Number((await row())?.attempts) === 1, 5000);
  assert.equal((await row())?.error, 'slow down', 'the last error is kept on the row');
  await waitFor(async () => Number((await row())?.attempts) === 2, 5000);
  assert.ok(s.at[1]! - s.at[0]! >= 400, `the second poll waited ${s.at[1]! - s.at[0]!} ms after a 429 asking 400`);
  await waitFor(async () => (await statusOf(h, task_id)) === 'completed', 5000);
});

test('a cancelled task stays cancelled although the poll in flight brings the video; cancelling again answers the same', async () => {
  const s = scripted(() => ({ state: 'completed', video: VIDEO, model: 'm' }), 300);
  const h = start(store(), s.driver);
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => s.polls.length === 1, 5000);
  const cancelled = await h.tasks.cancel(task_id);
  assert.deepEqual(cancelled, { status: 'cancelled', task_id, provider: 'scripted', error: 'cancelled on request' });
  await waitFor(() => s.cancels.length === 1, 2000, "the provider's cancel was called (after the answer)");
  await sleep(500); // the poll ends with "completed"
  assert.equal(await statusOf(h, task_id), 'cancelled');
  assert.deepEqual(await h.tasks.cancel(task_id), cancelled);
  assert.equal(s.cancels.length, 1);
  assert.deepEqual(
    h.events.filter((e) => e.type === 'media.video_task').map((e) => e.data.status),
    ['processing', 'cancelled'],
  );
  assert.deepEqual(
    h.metered.map((r) => [r.ok, r.error]),
    [[false, 'cancelled']],
  );
});

test("DELETE answers at once while the provider's cancel hangs: it runs in the background, bounded and tracked", async () => {
  const s = scripted(() => ({ state: 'processing' }));
  let asked: AbortSignal | undefined;
  s.driver.cancelVideo = (id, signal) => {
    s.cancels.push(id);
    asked = signal;
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  };
  const h = start(store(), s.driver, { poll: false, config: { video_timeout_secs: 30 } });
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'a slow cancel' });
  const started = Date.now();
  const view = await h.tasks.cancel(task_id);
  assert.ok(Date.now() - started < 1000, `answered after ${Date.now() - started} ms`);
  assert.equal(view?.status, 'cancelled');
  assert.equal(await statusOf(h, task_id), 'cancelled');
  assert.deepEqual(
    h.events.map((e) => e.data.status),
    ['processing', 'cancelled'],
    'announced before the answer',
  );
  await waitFor(() => s.cancels.length === 1, 2000, "the provider's cancel asked");
  assert.equal(asked?.aborted, false, 'still waiting for the provider');
  await waitFor(() => h.metered.length === 1, 2000, 'metered');
  await h.stop();
  assert.equal(asked?.aborted, true, 'stopped with the module copy');
});

test('of videos that finish at once, one at a time is downloaded and held until stored; downloads outside a poll do not wait', async () => {
  const gate = new VideoGate();
  // Videos downloading or downloaded and not yet stored: what the process holds in memory.
  let held = 0;
  let most = 0;
  const net = {
    async webFetch() {
      most = Math.max(most, ++held);
      await sleep(80);
      return new Response(new Uint8Array(VIDEO), { status: 200 });
    },
  } as unknown as NetFetch;
  const catalog = { baseUrl: () => 'https://api.example', configuredUrl: () => undefined } as unknown as CatalogService;
  const kit = createKit({ catalog, net, maxResultBytes: () => 1_000_000, videoGate: gate });
  const download = (id: string, signal: AbortSignal) =>
    kit.download('scripted', `https://cdn.example/${id}.mp4`, { maxBytes: 1_000_000, timeoutMs: 5000, signal });
  const s = scripted(() => ({ state: 'processing' }));
  s.driver.pollVideo = async (id, signal) => ({ state: 'completed', video: await download(id, signal), model: 'm' });
  const h = start(store(), s.driver, {
    gate,
    onSave: async () => {
      await sleep(40);
      held--;
    },
  });
  const ids = await Promise.all([1, 2, 3].map((n) => h.tasks.submit(s.driver, { prompt: `video ${n}` })));
  await waitFor(async () => (await Promise.all(ids.map(({ task_id }) => statusOf(h, task_id)))).every((st) => st === 'completed'), 5000, 'all completed');
  assert.equal(most, 1, 'one finished video in memory at a time');
  assert.equal(h.saved.length, 3);
  // Image downloads (no poll around them) run side by side.
  most = 0;
  held = 0;
  await Promise.all([download('a', new AbortController().signal), download('b', new AbortController().signal)]);
  assert.equal(most, 2);
});

test('a completed or failed task cannot be cancelled (409); an unknown one is undefined', async () => {
  const s = scripted(() => ({ state: 'completed', video: VIDEO, model: 'm' }));
  const h = start(store(), s.driver);
  const { task_id } = await h.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => (await statusOf(h, task_id)) === 'completed', 5000);
  await assert.rejects(h.tasks.cancel(task_id), (err: Error & { statusCode?: number }) => err.statusCode === 409 && /already completed/.test(err.message));
  assert.equal(await h.tasks.cancel(randomUUID()), undefined);
  assert.equal(await h.tasks.view(randomUUID()), undefined);
});

test('two processes on one database never poll one task at once, and it completes once', async () => {
  const s = scripted((n) => (n < 6 ? { state: 'processing', progress: n } : { state: 'completed', video: VIDEO, model: 'm' }), 30);
  const db = store();
  const a = start(db, s.driver, { node: 'node-a' });
  const b = start(db, s.driver, { node: 'node-b' });
  const ids = await Promise.all([1, 2, 3].map(() => a.tasks.submit(s.driver, { prompt: 'x' })));
  for (const { task_id } of ids) await waitFor(async () => (await statusOf(a, task_id)) === 'completed', 10_000);
  assert.equal(s.polls.length, 18, 'six polls per task, none twice');
  for (const { task_id } of ids) {
    const ends = [...a.events, ...b.events].filter((e) => e.data.task_id === task_id && e.data.status === 'completed');
    assert.equal(ends.length, 1, 'announced once');
  }
  assert.equal(a.metered.length + b.metered.length, 3, 'metered once per task');
  assert.equal(a.saved.length + b.saved.length, 3, 'stored once per task');
});

test('of two processes claiming one due task at the same moment, exactly one gets it', async () => {
  const db = store();
  const [a, b] = [new VideoTaskStore(db.store), new VideoTaskStore(db.store)];
  const now = Date.now();
  for (let i = 0; i < 5; i++) {
    const task_id = randomUUID();
    await a.insert({ task_id, provider: 'p', provider_task_id: 'x', model: 'm', prompt: 'p', next_poll_at: now - 1, deadline_at: now + 60_000, now });
    // Both read the task as free before either writes its claim.
    const [byA, byB] = await Promise.all([a.claimDue('node-a', Date.now(), 5000, 1), b.claimDue('node-b', Date.now(), 5000, 1)]);
    assert.equal(byA.length + byB.length, 1, `task ${i}: claimed once`);
    await db.store.run("UPDATE media_video_tasks SET status = 'failed' WHERE task_id = ?", [task_id]);
  }
});

test('a task held by a process that died is polled again: at once after takeOver, else when the lease ends', async () => {
  const s = scripted(() => ({ state: 'completed', video: VIDEO, model: 'm' }));
  const db = store();
  const submitter = start(db, s.driver, { poll: false });
  const { task_id } = await submitter.tasks.submit(s.driver, { prompt: 'x' });
  // A process claimed it and died: its claim, with a lease far in the future, is left in the row.
  await db.store.run('UPDATE media_video_tasks SET node = ?, lease_until = ? WHERE task_id = ?', ['dead-node', Date.now() + 60_000, task_id]);
  const live = start(db, s.driver, { node: 'live-node' });
  await sleep(150);
  assert.equal(s.polls.length, 0, 'a held task is not polled');
  await live.tasks.takeOver('dead-node');
  await waitFor(async () => (await statusOf(live, task_id)) === 'completed', 5000);

  const second = await submitter.tasks.submit(s.driver, { prompt: 'y' });
  await db.store.run('UPDATE media_video_tasks SET node = ?, lease_until = ? WHERE task_id = ?', ['hung-node', Date.now() + 200, second.task_id]);
  await waitFor(async () => (await statusOf(live, second.task_id)) === 'completed', 5000);
});

test('a long poll keeps its claim: the lease is renewed, so another process does not poll the task meanwhile', async () => {
  const s = scripted(() => ({ state: 'completed', video: VIDEO, model: 'm' }), 900);
  const db = store();
  const a = start(db, s.driver, { node: 'node-a', leaseMs: 300 });
  const { task_id } = await a.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => s.polls.length === 1, 5000);
  start(db, s.driver, { node: 'node-b', leaseMs: 300 });
  await waitFor(async () => (await statusOf(a, task_id)) === 'completed', 5000);
  assert.equal(s.maxConcurrent, 1);
  assert.equal(s.polls.length, 1);
});

test('a stopping poller gives its claims back at once (the poll in flight is aborted, no attempt counted)', async () => {
  const s = scripted(() => ({ state: 'completed', video: VIDEO, model: 'm' }), 10_000);
  const db = store();
  const a = start(db, s.driver, { node: 'node-a' });
  const { task_id } = await a.tasks.submit(s.driver, { prompt: 'x' });
  await waitFor(async () => s.polls.length === 1, 5000);
  const began = Date.now();
  await a.stop();
  assert.ok(Date.now() - began < 2000, 'the poll was aborted');
  const row = await db.store.one<{ node: string | null; attempts: number; status: string }>(
    'SELECT node, attempts, status FROM media_video_tasks WHERE task_id = ?',
    [task_id],
  );
  assert.deepEqual({ node: row?.node, attempts: Number(row?.attempts), status: row?.status }, { node: null, attempts: 0, status: 'processing' });
});
