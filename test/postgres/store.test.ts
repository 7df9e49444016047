/**
 * The PostgreSQL store on a real server (testing-kit startPostgres): the store contract test/store.test.ts runs on
 * SQLite, then what is PostgreSQL's own: integers as numbers and the 2^53 refusal, the retry of a transaction that lost
 * a race, savepoints after a failed statement, the statement timeout, prepared statements across a schema change.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '@talon/module-sdk';
import { openPostgresTestStore, postgresMissing, startPostgres, type PostgresServer } from '@talon/testing';
import { PostgresStore } from '../../kernel/store/postgres.ts';
import { storeContract } from '../support/store-contract.ts';

describe('PostgreSQL store', { skip: postgresMissing() }, () => {
  let server: PostgresServer;
  before(async () => void (server = await startPostgres()));
  after(async () => server?.stop());

  /** A store on a fresh database; `options` as PostgresStore takes them. */
  async function fresh(options: { statementTimeoutMs?: number; poolSize?: number } = {}) {
    const url = await server.createDatabase();
    const store = new PostgresStore({ url, ...options });
    return {
      store,
      url,
      async close() {
        await store.close();
        await server.dropDatabase(url);
      },
    };
  }
  const withStore = (fn: (store: PostgresStore) => Promise<void>, options?: { statementTimeoutMs?: number; poolSize?: number }) => async () => {
    const opened = await fresh(options);
    try {
      await fn(opened.store);
    } finally {
      await opened.close();
    }
  };

  storeContract('postgres', async () => openPostgresTestStore());

  test(
    'a NUL in a string value (which PostgreSQL text cannot hold) is stored as U+FFFD, in and out of a transaction, not refused',
    withStore(async (store) => {
      await store.exec('CREATE TABLE t (v TEXT NOT NULL)');
      await store.run('INSERT INTO t (v) VALUES (?)', ['a\0b']);
      await store.tx((t) => t.run('INSERT INTO t (v) VALUES (?)', ['\0\0']));
      assert.deepEqual(await store.many('SELECT v FROM t ORDER BY v'), [{ v: 'a\uFFFDb' }, { v: '\uFFFD\uFFFD' }]);
      assert.deepEqual(await store.one('SELECT COUNT(*) AS n FROM t WHERE v = ?', ['a\0b']), { n: 1 }, 'a lookup by the same value finds it');
    }),
  );

  test(
    'integers come back as numbers (BIGINT, COUNT, SUM, NUMERIC, arrays); a value past 2^53 is refused, not rounded',
    withStore(async (store) => {
      await store.exec('CREATE TABLE n (v BIGINT NOT NULL)');
      await store.run('INSERT INTO n (v) VALUES (?), (?), (?)', [1, 2 ** 40, BigInt(Number.MAX_SAFE_INTEGER) - 1n]);
      const row = await store.one('SELECT COUNT(*) AS c, MIN(v) AS lo, SUM(v) - SUM(v) AS zero FROM n');
      assert.deepEqual(row, { c: 3, lo: 1, zero: 0 });
      assert.deepEqual(await store.one('SELECT 2.5::numeric AS x, array_agg(v ORDER BY v) AS a FROM n'), {
        x: 2.5,
        a: [1, 2 ** 40, Number.MAX_SAFE_INTEGER - 1],
      });
      await assert.rejects(store.one('SELECT SUM(v) AS s FROM n'), /PostgreSQL returned \d+, past 2\^53/);
      await assert.rejects(store.one('SELECT 9007199254740993::bigint AS v'), /past 2\^53.*cannot hold it exactly/);
      // The store is still usable after a refused row (the connection was not left mid-result).
      assert.deepEqual(await store.one('SELECT 1::bigint AS one'), { one: 1 });
    }),
  );

  test(
    'a transaction that fails with a serialization failure is run again once, whole; a second failure is thrown',
    withStore(async (store) => {
      await store.exec('CREATE TABLE r (k TEXT PRIMARY KEY)');
      const fail = "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = 'serialization_failure'; END $$";
      let attempts = 0;
      await store.tx(async (t) => {
        attempts++;
        await t.run('INSERT INTO r (k) VALUES (?)', ['once']);
        if (attempts === 1) await t.exec(fail);
      });
      assert.equal(attempts, 2);
      assert.deepEqual(await store.many('SELECT k FROM r'), [{ k: 'once' }]);
      attempts = 0;
      await assert.rejects(
        store.tx(async (t) => {
          attempts++;
          await t.exec(fail);
        }),
        (err: { code?: string }) => err.code === '40001',
      );
      assert.equal(attempts, 2, 'one retry, not more');
    }),
  );

  test(
    'two transactions that deadlock: the one PostgreSQL picks is retried and both commit',
    withStore(async (store) => {
      await store.exec("CREATE TABLE d (k TEXT PRIMARY KEY, v BIGINT NOT NULL); INSERT INTO d VALUES ('a', 0), ('b', 0)");
      let bothLocked!: () => void;
      const barrier = new Promise<void>((resolve) => (bothLocked = resolve));
      let locked = 0;
      let attempts = 0;
      let survived!: () => void;
      const committed = new Promise<void>((resolve) => (survived = resolve));
      // Each locks one row, waits until the other has its row, then asks for the other's: a deadlock (this test
      // breaks the rule "await only t" on purpose, to line the two up). The victim's second run waits for the other
      // to commit: started sooner, it could take its first row again before the other had both, a second deadlock.
      const crossing = (first: string, second: string) =>
        store
          .tx(async (t) => {
            if (++attempts > 2) await committed;
            await t.run('UPDATE d SET v = v + 1 WHERE k = ?', [first]);
            if (++locked === 2) bothLocked();
            await barrier;
            await t.run('UPDATE d SET v = v + 1 WHERE k = ?', [second]);
          })
          .then(() => survived());
      await Promise.all([crossing('a', 'b'), crossing('b', 'a')]);
      assert.equal(attempts, 3, 'the victim ran twice');
      assert.deepEqual(await store.many('SELECT k, v FROM d ORDER BY k'), [
        { k: 'a', v: 2 },
        { k: 'b', v: 2 },
      ]);
    }),
  );

  test(
    'after a failed statement only a savepoint rolled back makes the transaction usable again (unlike SQLite)',
    withStore(async (store) => {
      await store.exec('CREATE TABLE u (k TEXT PRIMARY KEY)');
      await store.run("INSERT INTO u VALUES ('x')");
      await assert.rejects(
        store.tx(async (t) => {
          await t.run("INSERT INTO u VALUES ('x')").catch(() => undefined);
          await t.run("INSERT INTO u VALUES ('y')");
        }),
        /current transaction is aborted/,
      );
      await store.tx(async (t) => {
        await t.tx((s) => s.run("INSERT INTO u VALUES ('x')")).catch(() => undefined);
        await t.tx(async (s) => {
          await s.tx((deeper) => deeper.run("INSERT INTO u VALUES ('z')"));
          await s.run("INSERT INTO u VALUES ('y')");
        });
      });
      assert.deepEqual(await store.many('SELECT k FROM u ORDER BY k'), [{ k: 'x' }, { k: 'y' }, { k: 'z' }]);
    }),
  );

  test(
    'a statement past the statement timeout is cancelled, naming the setting; waiting on an open transaction says so',
    withStore(
      async (store) => {
        const started = Date.now();
        await assert.rejects(store.one('SELECT pg_sleep(5)'), /statement timeout \(after 300 ms, \[database\] statement_timeout_ms\)/);
        assert.ok(Date.now() - started < 3_000);
        await store.exec("CREATE TABLE w (k TEXT PRIMARY KEY, v BIGINT); INSERT INTO w VALUES ('a', 0)");
        await assert.rejects(
          store.tx(async (t) => {
            await t.run("UPDATE w SET v = 1 WHERE k = 'a'");
            await store.run("UPDATE w SET v = 2 WHERE k = 'a'");
          }),
          /inside a transaction waits for that transaction's locks \(use its handle `t`\)/,
        );
        assert.deepEqual(await store.one('SELECT v FROM w'), { v: 0 });
      },
      { statementTimeoutMs: 300 },
    ),
  );

  test(
    'a prepared statement whose table changed (a migration ran) runs again on a fresh connection',
    withStore(
      async (store) => {
        await store.exec("CREATE TABLE p (a TEXT); INSERT INTO p VALUES ('x')");
        assert.deepEqual(await store.one('SELECT * FROM p'), { a: 'x' });
        await store.exec("ALTER TABLE p ADD COLUMN b TEXT NOT NULL DEFAULT 'y'");
        assert.deepEqual(await store.one('SELECT * FROM p'), { a: 'x', b: 'y' });
        const changed = await store.tx((t) => t.one('SELECT * FROM p'));
        assert.deepEqual(changed, { a: 'x', b: 'y' });
        await store.exec("ALTER TABLE p ADD COLUMN c TEXT NOT NULL DEFAULT 'z'");
        assert.deepEqual(await store.tx((t) => t.one('SELECT * FROM p')), { a: 'x', b: 'y', c: 'z' });
      },
      { poolSize: 1 },
    ),
  );

  test(
    'statements outside a transaction run beside it on other connections; sqlite() names the engine',
    withStore(async (store: Store) => {
      await store.exec('CREATE TABLE o (k TEXT PRIMARY KEY)');
      await store.tx(async (t) => {
        await t.run("INSERT INTO o VALUES ('in')");
        // Not awaited inside: it runs at once on another connection, and does not see the uncommitted row.
        const outside = store.many('SELECT k FROM o');
        assert.deepEqual(await outside, []);
      });
      assert.throws(() => store.sqlite(), /runs on PostgreSQL/);
      assert.equal(store.pick({ sqlite: 1, postgres: 2 }), 2);
    }),
  );
});
