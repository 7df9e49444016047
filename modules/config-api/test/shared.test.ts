/**
 * A value set through the API on one process applies on the others of the database: two processes on one home (both
 * engines), and a fleet's nodes with a config.toml each (PostgreSQL: on SQLite the database is in the home, so nodes
 * with homes of their own share none). Where a node listens is its own; a secret goes sealed; a node that was down
 * takes the changes made meanwhile at its start, unless its file was written after them.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const only = ['config-api', 'error-envelope', 'auth', 'rate-limit', 'logs', 'secrets'];
const SECRET = 'tok-very-secret-0123456789';
const dirs: string[] = [];
const kernels: TestKernel[] = [];
const tempDir = (name: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), `talon-config-shared-${name}-`));
  dirs.push(dir);
  return dir;
};
after(async () => {
  for (const k of kernels) await k.stop().catch(() => undefined);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startTestKernel>[0]): Promise<TestKernel> {
  const k = await startTestKernel({ only, feedPollMs: 50, ...options });
  kernels.push(k);
  return k;
}
const stop = async (k: TestKernel) => {
  kernels.splice(kernels.indexOf(k), 1);
  await k.stop();
};
const set = async (k: TestKernel, key: string, value: unknown) => {
  const res = await k.request('/api/config/set', { method: 'POST', json: { path: key, value } });
  assert.equal(res.status, 200, await res.clone().text());
};
/** The top-level keys, and the [logs] table these tests edit. */
type Config = Record<string, unknown> & { logs: Record<string, unknown> };
const configOf = async (k: TestKernel) => (await (await k.request('/api/config')).json()) as Config;
const fileOf = (k: TestKernel) => parse(readFileSync(path.join(k.home, 'config.toml'), 'utf8')) as Config;
const until = (what: string, check: () => Promise<boolean>) => waitFor(async () => (await check()) || undefined, 5000, what);

test('two processes on one home: a value set on one is running on the other at once', { timeout: 30_000 }, async () => {
  const home = tempDir('home');
  const a = await start({ home, config: 'rate_limit_per_second = 10\n' });
  const b = await start({ home });
  await set(a, 'rate_limit_per_second', 7);
  await until('b to run with the new value', async () => (await configOf(b)).rate_limit_per_second === 7);
});

const fleet = { skip: process.env.TALON_TEST_DB !== 'postgres' && 'nodes with homes of their own share a database on PostgreSQL only' };

test(
  'nodes with a config.toml each: a change applies to every file and running configuration; the listen address stays',
  { ...fleet, timeout: 60_000 },
  async () => {
    const data = tempDir('data');
    const a = await start({ home: tempDir('a'), dataDir: data, config: '[logs]\nretention_days = 7\n' });
    const b = await start({ home: tempDir('b'), dataDir: data, databaseUrl: a.databaseUrl, config: '[logs]\nretention_days = 7\n' });
    const listenOfB = fileOf(b).api_listen;

    await set(a, 'logs.retention_days', 3);
    await set(a, 'api_listen', '127.0.0.1:4999');
    await until('b to run with the new retention', async () => (await configOf(b)).logs.retention_days === 3);
    assert.equal(fileOf(b).logs.retention_days, 3, "written to b's own file");
    assert.equal(fileOf(b).api_listen, listenOfB, 'where a node listens is its own');

    // A secret is shared sealed: the other node requires the new key, its file has it, the table holds no plaintext.
    await set(a, 'api_key', SECRET);
    await until('b to require the key', async () => (await b.request('/api/config')).status === 401);
    assert.equal(fileOf(b).api_key, SECRET);
    const rows = await a.kernel.store.many<{ path: string; value: string; sealed: number }>('SELECT path, value, sealed FROM config_api_changes ORDER BY seq');
    assert.deepEqual(
      rows.map((r) => [r.path, r.sealed]),
      [
        ['logs.retention_days', 0],
        ['api_key', 1],
      ],
    );
    assert.ok(!rows[1].value.includes(SECRET));
  },
);

test('a node that was down takes the changes made meanwhile at its start, unless its file was written after them', { ...fleet, timeout: 60_000 }, async () => {
  const data = tempDir('data');
  const homeOfB = tempDir('b');
  const a = await start({ home: tempDir('a'), dataDir: data });
  const startB = () => start({ home: homeOfB, dataDir: data, databaseUrl: a.databaseUrl });
  await stop(await startB());
  await set(a, 'logs.retention_days', 4);
  let b = await startB();
  assert.equal((await configOf(b)).logs.retention_days, 4, 'applied at its start');
  assert.equal(fileOf(b).logs.retention_days, 4);

  await stop(b);
  await set(a, 'logs.backlog_lines', 500);
  // An operator's rolling update writes b's file after that change: the file is what b runs with.
  const file = path.join(homeOfB, 'config.toml');
  await new Promise((resolve) => setTimeout(resolve, 10));
  writeFileSync(file, readFileSync(file, 'utf8').replace(/retention_days = 4/, 'retention_days = 9'));
  b = await startB();
  const logs = (await configOf(b)).logs;
  assert.deepEqual([logs.retention_days, logs.backlog_lines], [9, 1000]);
});
