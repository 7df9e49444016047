import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { openTestStore, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { NodeRegistry } from '../kernel/store/nodes.ts';

const modulesDir = path.resolve('test/fixtures/modules');

type Heard = { node: string; live: string[]; changes: string[]; remote: unknown[]; local: unknown[]; gone: string[] };
const heard = async (k: TestKernel): Promise<Heard> => (await (await k.request('/api/noter')).json()) as Heard;

/**
 * Two processes on one home's SQLite file, in every run (the same on PostgreSQL: test/postgres/kernel.test.ts and
 * feed-notify.test.ts).
 */
async function twoKernels(home: string): Promise<[TestKernel, TestKernel]> {
  const options = { home, modulesDir, only: ['noter', 'migrator'], heartbeatMs: 200, database: 'sqlite' as const };
  return Promise.all([startTestKernel(options), startTestKernel(options)]);
}

test('two processes starting together on one home migrate once and both come up whole', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-two-'));
  try {
    const [a, b] = await twoKernels(home);
    for (const k of [a, b]) {
      assert.deepEqual(await (await k.request('/api/migrator')).json(), { items: [{ name: 'seed' }] });
      assert.equal(k.kernel.modules().find((m) => m.id === 'migrator')?.state, 'running');
    }
    const db = new Database(path.join(home, 'talon.db'), { readonly: true });
    const ledger = db.prepare("SELECT id, dialect FROM kernel_migrations WHERE module = 'migrator' ORDER BY id").all();
    db.close();
    assert.deepEqual(ledger, [
      { id: '0001_items', dialect: 'sqlite' },
      { id: '0002_seed', dialect: 'sqlite' },
    ]);
    await Promise.all([a.stop(), b.stop()]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('changes noted and events published by one process reach the other; acting subscribers hear only their own', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-feed-'));
  try {
    const [a, b] = await twoKernels(home);
    await waitFor(async () => (await heard(a)).live.length === 2, 5_000);
    assert.equal((await a.request('/api/noter/apple', { method: 'POST' })).status, 200);
    await waitFor(async () => (await heard(b)).changes.includes('apple'), 5_000);
    await waitFor(async () => (await heard(b)).remote.includes('apple'), 5_000);
    const [fromA, fromB] = [await heard(a), await heard(b)];
    assert.deepEqual(fromA.changes, [], 'a process does not hear its own notes');
    assert.deepEqual(fromA.local, ['apple']);
    assert.deepEqual(fromB.local, [], 'a local-only subscriber never gets another process’s event');
    assert.deepEqual(fromA.remote, ['apple'], 'a remote subscriber gets its own process’s events once');
    await Promise.all([a.stop(), b.stop()]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a node that stops beating is found dead and handed to every live process, once; if it wakes it stops', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-dead-'));
  try {
    const [a, b] = await twoKernels(home);
    const silent = (await heard(b)).node;
    assert.ok(b.kernel.nodes.active, 'a beating node takes work');
    // b falls silent as a killed process would: its heartbeat stops and it never marks itself stopped.
    b.kernel.nodes.silence();
    assert.equal(b.kernel.nodes.active, false, 'a silent node takes no more work (its modules check before they claim)');
    await waitFor(async () => (await heard(a)).gone.includes(silent), 5_000);
    assert.deepEqual((await heard(a)).live, [(await heard(a)).node]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(
      (await heard(a)).gone.filter((n) => n === silent),
      [silent],
      'handed over once',
    );
    // b wakes up (a process paused, not killed): its work was taken over, so it must stop instead of going on.
    await b.kernel.nodes.beat();
    await waitFor(async () => (await b.request('/api/health').catch(() => undefined)) === undefined, 5_000, 'the fenced process to stop');
    // A process that starts now is handed the gone node too, once its modules have started.
    const c = await startTestKernel({ home, modulesDir, only: ['noter', 'migrator'], heartbeatMs: 200, database: 'sqlite' });
    await waitFor(async () => (await heard(c)).gone.length > 0, 5_000, 'the new process to hear of the gone node');
    assert.deepEqual((await heard(c)).gone, [silent]);
    await c.stop();
    await Promise.all([a.stop(), b.stop()]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('TALON_API_LISTEN overrides api_listen, and a bad value stops start-up naming it', async () => {
  const free = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
  try {
    process.env.TALON_API_LISTEN = 'nowhere';
    await assert.rejects(startTestKernel({ modulesDir, only: ['noter'] }), /invalid value for 'TALON_API_LISTEN': 'nowhere' is not host:port/);
    process.env.TALON_API_LISTEN = `127.0.0.1:${free}`;
    const k = await startTestKernel({ modulesDir, only: ['noter'], config: 'log_level = "info"\n' });
    assert.equal(k.kernel.port, free, 'the environment wins over api_listen in config.toml');
    assert.ok(
      k.logLines().some((l) => l.includes('"from":"TALON_API_LISTEN"')),
      'the address and where it came from are logged',
    );
    await k.stop();
  } finally {
    delete process.env.TALON_API_LISTEN;
  }
});

test('a module gets a frozen KernelApi, never the kernel itself (no store, nodes, database or hooks through it)', async () => {
  const k = await startTestKernel({ modulesDir, only: ['noter'] });
  try {
    const seen = (await (await k.request('/api/noter/kernel')).json()) as { frozen: boolean; keys: string[] };
    assert.equal(seen.frozen, true);
    assert.deepEqual(seen.keys, [
      'apiListen',
      'config',
      'dev',
      'earlyLogLines',
      'listenAddress',
      'modules',
      'reloadCount',
      'reloadModule',
      'routes',
      'shutdown',
      'startedAt',
      'version',
    ]);
  } finally {
    await k.stop();
  }
});

test('a process still starting is not found dead for a slow boot; once it listens, three missed beats are', async () => {
  const { store, close } = openTestStore();
  const noop = () => undefined;
  const starting = new NodeRegistry(store, 50, noop, noop);
  const watcher = new NodeRegistry(store, 50, noop, noop);
  try {
    await starting.start('127.0.0.1:1');
    await watcher.start('127.0.0.1:2');
    await watcher.listening('127.0.0.1:2');
    // Loading modules holds the starting process's event loop: no beat for many leases.
    starting.silence();
    await new Promise((resolve) => setTimeout(resolve, 400));
    await watcher.beat();
    assert.ok((await watcher.live()).includes(starting.id), 'a slow boot is not a death');
    await starting.listening('127.0.0.1:1');
    await new Promise((resolve) => setTimeout(resolve, 400));
    await watcher.beat();
    assert.ok(!(await watcher.live()).includes(starting.id), 'a started process that stops beating is dead');
  } finally {
    await watcher.stop();
    close();
  }
});

test('a node judges others silent only after watching steadily for a lease: not when it has just started or stalled', async () => {
  const { store, close } = openTestStore();
  const noop = () => undefined;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const quiet = new NodeRegistry(store, 50, noop, noop);
  const fresh = new NodeRegistry(store, 50, noop, noop);
  const other = new NodeRegistry(store, 50, noop, noop);
  try {
    await quiet.start('127.0.0.1:1');
    await quiet.listening('127.0.0.1:1');
    // Its beats stop (a second kernel starting in the same process holds the event loop, as in the tests).
    quiet.silence();
    await sleep(400);
    await fresh.start('127.0.0.1:2');
    await fresh.listening('127.0.0.1:2');
    assert.ok((await fresh.live()).includes(quiet.id), 'a node that has just started trusts the rows');
    await fresh.beat();
    assert.ok((await fresh.live()).includes(quiet.id), 'and marks nobody dead before it has watched for a lease');
    await sleep(300);
    await fresh.beat();
    assert.ok(!(await fresh.live()).includes(quiet.id), 'once steady, three missed beats are a death');

    await other.start('127.0.0.1:3');
    await other.listening('127.0.0.1:3');
    await sleep(300);
    // Both stall together (a busy machine): the watcher's own late beat says it cannot tell.
    fresh.silence();
    other.silence();
    await sleep(300);
    await fresh.beat();
    assert.ok((await fresh.live()).includes(other.id), 'a node whose own beat came late does not judge others');
  } finally {
    await fresh.stop();
    await other.stop();
    close();
  }
});
