/**
 * The kernel on PostgreSQL (a real server, testing-kit startPostgres): modules migrated from their
 * migrations/postgres/ files and recorded with dialect 'postgres'; two kernels starting at once on an empty database
 * migrate once; a module without a PostgreSQL twin of a migration fails naming the file; a database migrated by a
 * newer version stops start-up naming the migration; the change feed between processes without data_version.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { postgresMissing, startPostgres, startTestKernel, waitFor, type PostgresServer, type TestKernel } from '@talon/testing';
import { PostgresStore } from '../../kernel/store/postgres.ts';
import { Feed } from '../../kernel/store/feed.ts';
import { prepareLedger } from '../../kernel/migrations.ts';

const fixtures = path.resolve(import.meta.dirname, 'fixtures/modules');
const config = (modulePaths: string) => `module_paths = ["${modulePaths}"]\n`;

describe('the kernel on PostgreSQL', { skip: postgresMissing() }, () => {
  let server: PostgresServer;
  before(async () => void (server = await startPostgres()));
  after(async () => server?.stop());

  /** The data directory the kernels of each database share (each has a home of its own, as the nodes of a fleet). */
  const dataDirs = new Map<string, string>();

  /** Runs `fn` with a store on a fresh database (closed after). */
  async function onDatabase(fn: (url: string, store: PostgresStore) => Promise<void>): Promise<void> {
    const url = await server.createDatabase();
    const store = new PostgresStore({ url });
    dataDirs.set(url, mkdtempSync(path.join(tmpdir(), 'talon-pg-data-')));
    try {
      await fn(url, store);
    } finally {
      await store.close();
      await server.dropDatabase(url);
      rmSync(dataDirs.get(url)!, { recursive: true, force: true });
      dataDirs.delete(url);
    }
  }

  /** Sessions open on the database of `url` (the test's own store has not connected yet where this is asked). */
  async function connectionsTo(url: string): Promise<number> {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [new URL(url).pathname.slice(1)]);
      return (rows[0] as { n: number }).n;
    } finally {
      await client.end();
    }
  }

  const kernelOn = (url: string, only: string[], modulePaths = fixtures) =>
    startTestKernel({ databaseUrl: url, dataDir: dataDirs.get(url), only, config: config(modulePaths) });

  test('modules are migrated from migrations/postgres, recorded as postgres, and not again at a restart', () =>
    onDatabase(async (url, store) => {
      for (let start = 0; start < 2; start++) {
        const k = await kernelOn(url, ['pgmig', 'goals']);
        try {
          const body = await (await k.request('/api/pgmig')).json();
          assert.deepEqual(body, { dialect: 'postgres', items: [{ id: 1, name: 'seed' }] });
          const made = await k.request('/api/goals', { method: 'POST', json: { title: `goal ${start}` } });
          assert.equal(made.status, 201, await made.text());
        } finally {
          await k.stop();
        }
        assert.equal(await connectionsTo(url), 0, 'the kernel closed its pool at stop');
      }
      const ledger = await store.many("SELECT module, id, dialect FROM kernel_migrations WHERE module IN ('pgmig', 'goals') ORDER BY module, id");
      assert.deepEqual(ledger, [
        { module: 'goals', id: '0001_goals', dialect: 'postgres' },
        { module: 'pgmig', id: '0001_items', dialect: 'postgres' },
        { module: 'pgmig', id: '0002_seed', dialect: 'postgres' },
      ]);
      assert.deepEqual(await store.many('SELECT title FROM goals_goals ORDER BY seq'), [{ title: 'goal 0' }, { title: 'goal 1' }]);
      assert.deepEqual(await store.many('SELECT state FROM kernel_nodes'), [{ state: 'stopped' }, { state: 'stopped' }]);
    }));

  test('two kernels starting at once on an empty database migrate once, and both serve', () =>
    onDatabase(async (url, store) => {
      const kernels: TestKernel[] = [];
      try {
        const started = await Promise.allSettled([kernelOn(url, ['pgmig', 'goals']), kernelOn(url, ['pgmig', 'goals'])]);
        for (const s of started) if (s.status === 'fulfilled') kernels.push(s.value);
        for (const s of started) if (s.status === 'rejected') throw s.reason;
        for (const k of kernels) {
          const modules = k.kernel.modules();
          for (const id of ['pgmig', 'goals']) assert.equal(modules.find((m) => m.id === id)?.state, 'running', JSON.stringify(modules));
          assert.deepEqual(((await (await k.request('/api/pgmig')).json()) as { items: unknown[] }).items, [{ id: 1, name: 'seed' }]);
        }
        const counts = await store.many('SELECT module, COUNT(*) AS n FROM kernel_migrations GROUP BY module ORDER BY module');
        assert.deepEqual(counts, [
          { module: 'goals', n: 1 },
          { module: 'pgmig', n: 2 },
        ]);
        // A goal made on one is read on the other.
        const made = await kernels[0].request('/api/goals', { method: 'POST', json: { title: 'shared' } });
        const { id } = (await made.json()) as { id: string };
        assert.equal((await kernels[1].request(`/api/goals/${id}`)).status, 200);
      } finally {
        for (const k of kernels) await k.stop();
      }
    }));

  test('a module whose SQLite migration has no PostgreSQL file fails to load, naming the missing file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'talon-pg-missing-'));
    try {
      cpSync(path.join(fixtures, 'pgmig'), path.join(dir, 'pgmig'), { recursive: true });
      writeFileSync(path.join(dir, 'pgmig/migrations/0003_more.sql'), 'ALTER TABLE pgmig_items ADD COLUMN more TEXT;\n');
      await onDatabase(async (url) => {
        const k = await kernelOn(url, ['pgmig'], dir);
        try {
          const pgmig = k.kernel.modules().find((m) => m.id === 'pgmig')!;
          assert.equal(pgmig.state, 'failed');
          assert.match(pgmig.error!, /cannot run on PostgreSQL: its migration 0003_more.sql has no PostgreSQL counterpart migrations\/postgres\/0003_more.sql/);
        } finally {
          await k.stop();
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a database migrated by a newer version: start-up stops, naming the migration it does not know', () =>
    onDatabase(async (url, store) => {
      const k = await kernelOn(url, ['pgmig']);
      await k.stop();
      await store.run("INSERT INTO kernel_migrations (module, id, checksum, applied_at, dialect) VALUES ('pgmig', '0003_future', 'x', 'now', 'postgres')");
      await assert.rejects(kernelOn(url, ['pgmig']), (err: Error) => {
        assert.equal(err.name, 'BootAbort');
        assert.match(err.message, /module 'pgmig': the database has migration pgmig\/0003_future, which this version does not have/);
        return true;
      });
    }));

  test('a store that cannot reach its server stops start-up, naming the URL without its password', async () => {
    const url = new URL(server.url);
    url.port = String(Number(url.port) === 1 ? 2 : 1);
    url.password = 'hunter2';
    await assert.rejects(startTestKernel({ databaseUrl: url.toString(), only: [] }), (err: Error) => {
      assert.equal(err.name, 'BootAbort');
      assert.match(err.message, /PostgreSQL database at postgres:\/\/talon@127\.0\.0\.1:[12]\/postgres cannot be used/);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
  });

  test('the change feed between processes: a note committed after a later one is still delivered', () =>
    onDatabase(async (url, a) => {
      const b = new PostgresStore({ url });
      const errors: unknown[] = [];
      const writer = new Feed(
        a,
        'node-a',
        60_000,
        () => undefined,
        (err) => errors.push(err),
      );
      const reader = new Feed(
        b,
        'node-b',
        60_000,
        () => undefined,
        (err) => errors.push(err),
      );
      try {
        await prepareLedger(a);
        await writer.start();
        await reader.start();
        const heard: string[] = [];
        reader.on('m', 'rows', (key) => void heard.push(key));
        let commitEarly!: () => void;
        const held = new Promise<void>((resolve) => (commitEarly = resolve));
        let noted!: () => void;
        const early = a.tx(async (t) => {
          await writer.note('m', 'rows', 'early', t);
          noted();
          await held;
        });
        await new Promise<void>((resolve) => (noted = resolve));
        await writer.note('m', 'rows', 'late');
        await reader.poll();
        await waitFor(() => heard.length === 1, 2_000, 'the later note');
        commitEarly();
        await early;
        await reader.poll();
        await waitFor(() => heard.length === 2, 2_000, 'the earlier note, committed last');
        assert.deepEqual(heard, ['late', 'early']);
        assert.deepEqual(errors, []);
      } finally {
        writer.stop();
        reader.stop();
        await b.close();
      }
    }));
});
