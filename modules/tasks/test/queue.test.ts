/**
 * The durable queue on its own: two Queue copies on two connections to one database file (or to one PostgreSQL
 * database, with TALON_TEST_DB=postgres) stand for two processes, each with its own node id; the agent runner is a stub
 * the test resolves. Refreshes and takeovers that the change feed and the node heartbeat would start are called
 * directly, so every step is deterministic.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { HttpError, type Store } from '@talon/module-sdk';
import { openPostgresTestStore, openTestStore, waitFor } from '@talon/testing';
import type { AgentRegistry, AgentRunner, SessionStore, TurnRequest, TurnResult } from '@talon/agents';
import type { TasksConfig } from '../config.ts';
import { Queue } from '../services/queue.ts';
import { MAX_ATTEMPTS, QueueRows } from '../services/rows.ts';

const MODULE = path.resolve(import.meta.dirname, '..');
const AGENT = { id: 'a1', name: 'worker', manifest: { extra: {} } };

/** A runner whose turns wait until the test ends them; each call is recorded. */
class StubRunner {
  readonly calls: Array<{ request: TurnRequest; end: (response: string) => void }> = [];
  run(request: TurnRequest): Promise<TurnResult> {
    return new Promise((resolve) => {
      const end = (response: string) =>
        resolve({
          turnId: 't',
          agentId: request.agentId,
          sessionId: 's',
          response,
          inputTokens: 1,
          outputTokens: 1,
          iterations: 1,
          costUsd: 0,
          interrupted: request.signal?.aborted ?? false,
        });
      request.signal?.addEventListener('abort', () => end(''), { once: true });
      this.calls.push({ request, end });
    });
  }
}

interface Process {
  queue: Queue;
  store: Store;
  runner: StubRunner;
  node: string;
  nodes: { active: boolean };
  live: Set<string>;
}

const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

function lanes(caps: Record<string, number>): () => TasksConfig {
  return () => ({ claim_timeout_secs: 600, max_retries: 3, sweep_interval_secs: 30, lanes: caps }) as TasksConfig;
}

/** The PostgreSQL stores of the databases made here (TALON_TEST_DB=postgres), by URL. */
const pools = new Map<string, Store>();

/**
 * A process on the database: a connection of its own (the first one creates the database). With TALON_TEST_DB=postgres
 * a fresh PostgreSQL database, whose processes share one pool (each statement and transaction takes a connection of
 * its own, as another process's would); `file` is then its URL.
 */
async function proc(node: string, file?: string, caps: Record<string, number> = { schedule: 1 }): Promise<Process & { file: string }> {
  let s: { store: Store; file: string };
  if (process.env.TALON_TEST_DB !== 'postgres') {
    const sqlite = file ? openTestStore([], file) : openTestStore([MODULE]);
    opened.push(sqlite);
    s = sqlite;
  } else if (file) {
    s = { store: pools.get(file)!, file };
  } else {
    const pg = await openPostgresTestStore([MODULE]);
    opened.push({ close: () => (pools.delete(pg.url), pg.close()) });
    pools.set(pg.url, pg.store);
    s = { store: pg.store, file: pg.url };
  }
  const runner = new StubRunner();
  const live = new Set<string>();
  // `active` false: the node no longer beats (stopping, or silent past its lease) but its process goes on.
  const nodes = { id: node, live: async () => [...live], active: true };
  const queue = new Queue({
    registry: () => ({ get: (id: string) => (id === AGENT.id ? AGENT : undefined) }) as unknown as AgentRegistry,
    runner: () => runner as unknown as AgentRunner,
    sessions: () => ({ create: () => 'new-session' }) as unknown as SessionStore,
    config: lanes(caps),
    store: s.store,
    nodes,
    changes: { note: async () => undefined },
    log: pino({ level: 'silent' }),
    startedAt: 0,
  });
  return { queue, store: s.store, runner, node, nodes, live, file: s.file };
}

const turn = (extra: Record<string, unknown> = {}) => ({ lane: 'schedule', agentId: AGENT.id, message: 'hi', origin: 'schedule', ...extra });

async function row(p: Process, id?: string) {
  const rows = await p.store.many<{ id: string; state: string; node: string | null; attempts: number; result: string | null; error: string | null }>(
    'SELECT id, state, node, attempts, result, error FROM tasks_queue ORDER BY seq',
  );
  return id ? rows.find((r) => r.id === id) : rows[rows.length - 1];
}

test('a turn is a committed row before it runs; the row records the result the caller gets', async () => {
  const a = await proc('node-a');
  const answer = a.queue.runTurn(turn());
  await waitFor(() => a.runner.calls.length === 1, 2000, 'the turn to start');
  const running = await row(a);
  assert.equal(running?.state, 'running');
  assert.equal(running?.node, 'node-a');
  a.runner.calls[0].end('hello');
  assert.equal((await answer).response, 'hello');
  const done = await row(a);
  assert.equal(done?.state, 'done');
  assert.equal((JSON.parse(done!.result!) as TurnResult).response, 'hello');
});

test("the lane cap holds across processes: a second process does not start a turn while the first runs the lane's only slot", async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  const first = a.queue.runTurn(turn());
  await waitFor(() => a.runner.calls.length === 1, 2000, 'the first turn');
  const second = b.queue.runTurn(turn({ message: 'second' }));
  await waitFor(async () => (await row(b))?.state === 'queued', 2000, 'the second row');
  await b.queue.refresh();
  assert.equal(b.runner.calls.length, 0, 'b claimed past the cap');
  a.runner.calls[0].end('one');
  await first;
  // The slot is free: whichever process looks first (a as its turn ends, b on its change feed or poll) runs it.
  await b.queue.refresh();
  await waitFor(() => a.runner.calls.length + b.runner.calls.length === 2, 2000, 'the second turn to start');
  (a.runner.calls[1] ?? b.runner.calls[0]).end('two');
  await waitFor(async () => (await row(b))?.state === 'done', 2000, 'done');
  await b.queue.refresh();
  assert.equal((await second).response, 'two');
});

test('a turn another process ran resolves its caller here when the row turns done', async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  // A retired copy claims no turns: the turn a queues is b's to run.
  a.queue.retire();
  const answer = a.queue.runTurn(turn());
  await waitFor(async () => (await row(a))?.state === 'queued', 2000, 'the row');
  await b.queue.refresh();
  await waitFor(() => b.runner.calls.length === 1, 2000, 'b to run it');
  b.runner.calls[0].end('from b');
  await waitFor(async () => (await row(a))?.state === 'done', 2000, 'done');
  await a.queue.refresh();
  assert.equal((await answer).response, 'from b');
  assert.equal(a.runner.calls.length, 0);
});

test('a failure recorded elsewhere rejects the caller here with its HTTP status', async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  a.queue.retire();
  const answer = a.queue.runTurn(turn({ agentId: 'nobody' }));
  await waitFor(async () => (await row(a))?.state === 'queued', 2000, 'the row');
  await b.queue.refresh();
  await waitFor(async () => (await row(a))?.state === 'failed', 2000, 'failed');
  await a.queue.refresh();
  await assert.rejects(answer, (err: unknown) => err instanceof HttpError && err.statusCode === 404 && /nobody/.test(err.message));
});

test("kill -9: a dead node's running turn goes back to the queue (attempts counted) and a live node runs it; the result is recorded", async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  void a.queue.runTurn(turn()).catch(() => undefined);
  await waitFor(() => a.runner.calls.length === 1, 2000, 'a to run it');
  // a dies here: its turn never ends. Two live nodes notice; one UPDATE moves the row.
  const c = await proc('node-c', a.file);
  await Promise.all([b.queue.takeOver('node-a'), c.queue.takeOver('node-a')]);
  await waitFor(() => b.runner.calls.length + c.runner.calls.length === 1, 2000, 'one live node to run it again');
  // A pause that proves an absence: the other live node does not run it too.
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(b.runner.calls.length + c.runner.calls.length, 1, 'run twice');
  const runner = b.runner.calls.length ? b.runner : c.runner;
  assert.equal((await row(a))?.attempts, 2);
  runner.calls[0].end('recovered');
  await waitFor(async () => (await row(a))?.state === 'done', 2000, 'done');
  assert.match((await row(a))!.result!, /recovered/);
});

test('a node that no longer beats claims nothing: the turn taken back from it is run by a live node, not by it again', async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  void a.queue.runTurn(turn()).catch(() => undefined);
  await waitFor(() => a.runner.calls.length === 1, 2000, 'a to run it');
  // a stalls (its beats stop, its process goes on); b finds it gone and queues its turn again. Both look at once.
  a.nodes.active = false;
  b.nodes.active = false;
  await b.queue.takeOver('node-a');
  await Promise.all([a.queue.refresh(), b.queue.refresh()]);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(a.runner.calls.length + b.runner.calls.length, 1, 'neither claims while it does not beat');
  b.nodes.active = true;
  await b.queue.refresh();
  await waitFor(() => b.runner.calls.length === 1, 2000, 'b to run it again');
  assert.equal(a.runner.calls.length, 1, 'a took back what the others took over');
  b.runner.calls[0].end('recovered');
  await waitFor(async () => (await row(a))?.state === 'done', 2000, 'done');
});

test('a caller whose turn was taken from its node hears how the node that ran it again ended it, not its own cut-off run', async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  const answer = a.queue.runTurn(turn());
  let heard = false;
  answer.then(
    () => (heard = true),
    () => (heard = true),
  );
  await waitFor(() => a.runner.calls.length === 1, 2000, 'a to run it');
  // a stalls and is found gone (its process goes on): b queues the turn again and runs it; a's next look finds its run
  // no longer its own and stops it.
  a.nodes.active = false;
  await b.queue.takeOver('node-a');
  await b.queue.refresh();
  await waitFor(() => b.runner.calls.length === 1, 2000, 'b to run it again');
  await a.queue.refresh();
  await waitFor(() => a.runner.calls[0].request.signal?.aborted === true, 2000, "a's run to be stopped");
  // A pause that proves an absence: the stopped run is not the turn's outcome, so a's caller is not answered with it.
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(heard, false, "a's caller was answered with the run a no longer owned");
  b.runner.calls[0].end('from b');
  await waitFor(async () => (await row(a))?.state === 'done', 2000, 'done');
  await a.queue.refresh();
  assert.equal((await answer).response, 'from b');
});

test(`a turn whose node died ${MAX_ATTEMPTS} times is failed, saying so`, async () => {
  const a = await proc('node-a');
  void a.queue.runTurn(turn()).catch(() => undefined);
  const others = [a];
  for (let i = 1; i <= MAX_ATTEMPTS; i++) {
    const dying = others[others.length - 1];
    await waitFor(() => dying.runner.calls.length === 1, 2000, `attempt ${i}`);
    const next = await proc(`node-${i}`, a.file);
    await next.queue.takeOver(dying.node);
    others.push(next);
  }
  const last = await row(a);
  assert.equal(last?.state, 'failed');
  assert.equal(last?.attempts, MAX_ATTEMPTS);
  assert.match(last!.error!, new RegExp(`ended while it ran, ${MAX_ATTEMPTS} times`));
});

test('at start, rows whose caller is gone are claimed and run, and the rows of nodes not live are taken over', async () => {
  const a = await proc('node-a');
  a.queue.retire();
  void a.queue.runTurn(turn({ message: 'orphan' })).catch(() => undefined);
  await waitFor(async () => (await row(a))?.state === 'queued', 2000, 'the row');
  // A local job of a: its function died with a.
  a.queue.run('schedule', () => new Promise<void>(() => undefined)).catch(() => undefined);
  await waitFor(async () => (await a.store.many('SELECT id FROM tasks_queue')).length === 2, 2000, 'two rows');
  const b = await proc('node-b', a.file);
  b.live.add('node-b');
  await b.queue.start();
  await waitFor(() => b.runner.calls.length === 1, 2000, 'b to run the orphan');
  assert.equal(b.runner.calls[0].request.message, 'orphan');
  b.runner.calls[0].end('done anyway');
  await waitFor(async () => (await b.store.many("SELECT id FROM tasks_queue WHERE state = 'done'")).length === 1, 2000, 'recorded');
  const local = await b.store.one<{ state: string; error: string }>("SELECT state, error FROM tasks_queue WHERE kind = 'local'");
  assert.equal(local?.state, 'failed');
  assert.match(local!.error, /the process that queued it ended/);
});

test('cancelling (the signal) marks the row cancelled and stops the turn on the process that runs it', async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  a.queue.retire();
  const controller = new AbortController();
  const answer = a.queue.runTurn(turn({ signal: controller.signal }));
  await waitFor(async () => (await row(a))?.state === 'queued', 2000, 'the row');
  await b.queue.refresh();
  await waitFor(() => b.runner.calls.length === 1, 2000, 'b to run it');
  controller.abort();
  await assert.rejects(answer, (err: unknown) => err instanceof HttpError && err.statusCode === 409);
  await waitFor(async () => (await row(a))?.state === 'cancelled', 2000, 'cancelled');
  await b.queue.refresh();
  assert.equal(b.runner.calls[0].request.signal?.aborted, true, 'the turn on b was not stopped');
  // b's end of the turn does not overwrite the cancel.
  await new Promise((r) => setTimeout(r, 50));
  assert.equal((await row(a))?.state, 'cancelled');
});

test('a cancelled queued turn never runs', async () => {
  const a = await proc('node-a');
  const blocker = a.queue.runTurn(turn());
  await waitFor(() => a.runner.calls.length === 1, 2000, 'the blocker');
  const controller = new AbortController();
  const waiting = a.queue.runTurn(turn({ signal: controller.signal, message: 'never' }));
  await waitFor(async () => (await row(a))?.state === 'queued', 2000, 'queued');
  controller.abort();
  await assert.rejects(waiting, /stopped before the turn started/);
  a.runner.calls[0].end('x');
  await blocker;
  await a.queue.refresh();
  // A pause that proves an absence: the cancelled turn is not started.
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(a.runner.calls.length, 1);
});

test('a key already queued runs nothing more: the second caller gets the first row’s outcome', async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  const first = a.queue.runTurn(turn({ key: 'job:1:slot' }));
  await waitFor(() => a.runner.calls.length === 1, 2000, 'the turn');
  const second = b.queue.runTurn(turn({ key: 'job:1:slot' }));
  a.runner.calls[0].end('once');
  await first;
  await b.queue.refresh();
  assert.equal((await second).response, 'once');
  assert.equal(b.runner.calls.length, 0);
  // Also after the row ended.
  assert.equal((await b.queue.runTurn(turn({ key: 'job:1:slot' }))).response, 'once');
  assert.equal((await a.store.many('SELECT id FROM tasks_queue')).length, 1);
});

test('lane status counts rows: running and queued over every process, and the cap', async () => {
  const a = await proc('node-a', undefined, { schedule: 1, trigger: 8 });
  const b = await proc('node-b', a.file, { schedule: 1, trigger: 8 });
  void a.queue.runTurn(turn()).catch(() => undefined);
  await waitFor(() => a.runner.calls.length === 1, 2000, 'running');
  void b.queue.runTurn(turn()).catch(() => undefined);
  await waitFor(async () => (await b.queue.lanes()).find((l) => l.lane === 'schedule')?.queued === 1, 2000, 'queued');
  const status = await b.queue.lanes();
  assert.deepEqual(status[0], { lane: 'schedule', active: 1, queued: 1, capacity: 1, completed: 0 });
  a.runner.calls[0].end('x');
  await waitFor(async () => (await b.queue.lanes())[0].completed === 1, 2000, 'completed');
});

test("claims of different rows at once keep the lane's cap: of two processes claiming together, one gets the only slot", async () => {
  const a = await proc('node-a');
  const b = await proc('node-b', a.file);
  const rows = [new QueueRows(a.store), new QueueRows(b.store)];
  for (let round = 0; round < 10; round++) {
    const lane = `race-${round}`;
    // Two rows each process alone may take (a copy holding a local job, one taking only turns): no row lock decides.
    await rows[0].add({ id: `${lane}-job`, lane, kind: 'local', payload: '{}', owner: 'node-a', holder: 'copy-a' }, 1);
    await rows[1].add({ id: `${lane}-turn`, lane, kind: 'turn', payload: '{}', owner: 'node-b' }, 1);
    const claimed = await Promise.all([rows[0].claim(lane, 1, 'node-a', 'copy-a', true, 2), rows[1].claim(lane, 1, 'node-b', 'copy-b', false, 2)]);
    assert.equal(claimed.filter(Boolean).length, 1, `round ${round}: ${JSON.stringify(claimed)}`);
  }
});
