/**
 * What every store does, whatever its engine: the cases test/store.test.ts runs on SQLite and
 * test/postgres/store.test.ts runs on PostgreSQL. `open` gives a store on an empty database and its close.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WriteBehind, type Store } from '@talon/module-sdk';

export type OpenStore = () => Promise<{ store: Store; close(): Promise<void> | void }>;

/** A duplicate key, in either engine's words. */
const DUPLICATE = /UNIQUE|duplicate key/;

export function storeContract(engine: string, open: OpenStore): void {
  const withStore = (fn: (store: Store) => Promise<void>) => async () => {
    const opened = await open();
    try {
      await opened.store.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
      await fn(opened.store);
    } finally {
      await opened.close();
    }
  };

  test(
    `${engine}: one, many and run: rows, the first row, changes`,
    withStore(async (store) => {
      assert.deepEqual(await store.run('INSERT INTO t (k, v) VALUES (?, ?), (?, ?)', ['a', 1, 'b', 2]), { changes: 2 });
      assert.deepEqual(await store.one('SELECT v FROM t WHERE k = ?', ['b']), { v: 2 });
      assert.equal(await store.one('SELECT v FROM t WHERE k = ?', ['zz']), undefined);
      assert.deepEqual(await store.many('SELECT k FROM t ORDER BY k'), [{ k: 'a' }, { k: 'b' }]);
      assert.deepEqual(await store.one('INSERT INTO t (k, v) VALUES (?, ?) RETURNING v', ['c', 3]), { v: 3 });
      await assert.rejects(store.run('INSERT INTO t (k, v) VALUES (?, ?)', ['a', 9]), DUPLICATE);
      assert.deepEqual(await store.run('UPDATE t SET v = v + 1 WHERE v < ?', [3]), { changes: 2 });
      assert.deepEqual(await store.one('SELECT COUNT(*) AS n, SUM(v) AS total FROM t'), { n: 3, total: 8 });
      assert.equal(store.pick({ sqlite: 'x', postgres: 'y' }), store.dialect === 'sqlite' ? 'x' : 'y');
    }),
  );

  test(
    `${engine}: a statement outside an open transaction never joins it, and survives its rollback`,
    withStore(async (store) => {
      let outside: Promise<unknown> | undefined;
      await assert.rejects(
        store.tx(async (t) => {
          await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['in', 1]);
          outside = store.run('INSERT INTO t (k, v) VALUES (?, ?)', ['out', 2]);
          await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['in2', 1]);
          throw new Error('boom');
        }),
        /boom/,
      );
      await outside;
      assert.deepEqual(await store.many('SELECT k FROM t ORDER BY k'), [{ k: 'out' }]);
    }),
  );

  test(
    `${engine}: a failing transaction rolls back everything in it; a nested one is a savepoint`,
    withStore(async (store) => {
      await store.tx(async (t) => {
        await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['kept', 1]);
        await assert.rejects(
          t.tx(async (inner) => {
            await inner.run('INSERT INTO t (k, v) VALUES (?, ?)', ['undone', 1]);
            throw new Error('inner');
          }),
          /inner/,
        );
        // A failed statement inside a savepoint leaves the transaction usable once the savepoint is rolled back.
        await assert.rejects(
          t.tx((inner) => inner.run('INSERT INTO t (k, v) VALUES (?, ?)', ['kept', 2])),
          DUPLICATE,
        );
        await t.tx(async (inner) => inner.run('INSERT INTO t (k, v) VALUES (?, ?)', ['nested', 1]));
      });
      assert.deepEqual(await store.many('SELECT k FROM t ORDER BY k'), [{ k: 'kept' }, { k: 'nested' }]);
      await assert.rejects(
        store.tx(async (t) => {
          await t.tx(async (inner) => inner.run('INSERT INTO t (k, v) VALUES (?, ?)', ['lost', 1]));
          throw new Error('outer');
        }),
        /outer/,
      );
      assert.equal(await store.one('SELECT k FROM t WHERE k = ?', ['lost']), undefined);
    }),
  );

  test(
    `${engine}: a handle is unusable once its transaction ended; a transaction's value is returned`,
    withStore(async (store) => {
      let kept: Parameters<Parameters<Store['tx']>[0]>[0] | undefined;
      const value = await store.tx(async (t) => {
        kept = t;
        await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['x', 1]);
        return (await t.one<{ v: number }>('SELECT v FROM t WHERE k = ?', ['x']))!.v;
      });
      assert.equal(value, 1);
      await assert.rejects(kept!.one('SELECT 1'), /ended/);
    }),
  );

  test(
    `${engine}: exec runs a script of several statements; values come back as they were stored`,
    withStore(async (store) => {
      const table = store.pick({
        sqlite: 'CREATE TABLE s (n INTEGER, r REAL, b BLOB, x TEXT)',
        postgres: 'CREATE TABLE s (n BIGINT, r DOUBLE PRECISION, b BYTEA, x TEXT)',
      });
      await store.exec(`${table}; INSERT INTO s (n, r, x) VALUES (1, 0.5, 'a?b');`);
      await store.run('INSERT INTO s (n, r, b, x) VALUES (?, ?, ?, ?)', [Number.MAX_SAFE_INTEGER, -2.25, new Uint8Array([0, 1, 255]), null]);
      const rows = await store.many<{ n: number; r: number; b: Uint8Array | null; x: string | null }>('SELECT n, r, b, x FROM s ORDER BY n');
      assert.deepEqual(
        rows.map((r) => ({ ...r, b: r.b && [...r.b] })),
        [
          { n: 1, r: 0.5, b: null, x: 'a?b' },
          { n: Number.MAX_SAFE_INTEGER, r: -2.25, b: [0, 1, 255], x: null },
        ],
      );
    }),
  );

  test(
    `${engine}: write-behind queues flushed together: one whose rows fail loses only its own, the others are committed`,
    withStore(async (store) => {
      const lost: Record<string, string[]> = { good: [], bad: [] };
      const queue = (name: string) =>
        new WriteBehind<string>(
          store,
          (t, k) => t.run('INSERT INTO t (k, v) VALUES (?, ?)', [k, 1]),
          (_err, rows) => void lost[name]!.push(...rows),
        );
      const [good, bad, after] = [queue('good'), queue('bad'), queue('good')];
      await store.run('INSERT INTO t (k, v) VALUES (?, ?)', ['taken', 0]);
      // Pushed in one tick: one shared flush takes all three queues.
      good.push('g1');
      bad.push('b1');
      bad.push('taken');
      after.push('g2');
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([good.flush(), bad.flush(), after.flush()]);
      assert.deepEqual(lost, { good: [], bad: ['b1', 'taken'] });
      assert.deepEqual(await store.many('SELECT k FROM t ORDER BY k'), [{ k: 'g1' }, { k: 'g2' }, { k: 'taken' }]);
    }),
  );

  test(
    `${engine}: write-behind rows commit in the order they were taken: a later flush waits for an earlier slow one`,
    withStore(async (store) => {
      // A slow first write (a quarter second inside its transaction on PostgreSQL), a fast second one a tick later.
      const pause = store.pick({ sqlite: 'SELECT 1', postgres: 'SELECT pg_sleep(0.25)' });
      const slow = new WriteBehind<string>(
        store,
        async (t, k) => {
          await t.one(pause);
          await t.run('INSERT INTO t (k, v) VALUES (?, ?)', [k, 1]);
        },
        () => undefined,
      );
      const fast = new WriteBehind<string>(
        store,
        (t, k) => t.run('INSERT INTO t (k, v) VALUES (?, ?)', [k, 2]),
        () => undefined,
      );
      slow.push('first');
      await new Promise((resolve) => setImmediate(resolve));
      fast.push('second');
      const seen = async () => (await store.many<{ k: string }>('SELECT k FROM t ORDER BY k')).map((r) => r.k);
      for (let waited = 0; !(await seen()).includes('second'); waited += 10) {
        assert.ok(waited < 5_000, 'the second row was never written');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.deepEqual(await seen(), ['first', 'second'], 'the second row is never visible without the first');
    }),
  );
}
