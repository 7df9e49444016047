import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { WriteBehind } from '@talon/module-sdk';
import { openTestStore, waitFor } from '@talon/testing';
import { storeContract } from './support/store-contract.ts';

function withStore(fn: (s: ReturnType<typeof openTestStore>['store']) => Promise<void>) {
  return async () => {
    const opened = openTestStore();
    try {
      await opened.store.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
      await fn(opened.store);
    } finally {
      opened.close();
    }
  };
}

storeContract('sqlite', async () => openTestStore());

test(
  'transactions run one after another and a handle is unusable once its transaction ended',
  withStore(async (store) => {
    const order: string[] = [];
    let kept: Parameters<Parameters<typeof store.tx>[0]>[0] | undefined;
    await Promise.all(
      ['a', 'b', 'c'].map((k) =>
        store.tx(async (t) => {
          kept = t;
          order.push(`${k}+`);
          await t.run('INSERT INTO t (k, v) VALUES (?, ?)', [k, 1]);
          order.push(`${k}-`);
        }),
      ),
    );
    assert.deepEqual(order, ['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
    await assert.rejects(kept!.one('SELECT 1'), /ended/);
  }),
);

test(
  'the dev check: a transaction that awaits something else is rolled back with a message saying why',
  withStore(async (store) => {
    await assert.rejects(
      store.tx(async (t) => {
        await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['timer', 1]);
        await sleep(5);
        await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['timer2', 1]);
      }),
      /awaited something other than its own statements/,
    );
    assert.equal(await store.one('SELECT k FROM t WHERE k = ?', ['timer']), undefined);
  }),
);

test(
  'the dev check: a statement on the store inside its own transaction fails instead of waiting forever',
  withStore(async (store) => {
    await assert.rejects(
      store.tx(async (t) => {
        await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['mine', 1]);
        await store.run('INSERT INTO t (k, v) VALUES (?, ?)', ['wrong', 1]);
        await t.run('INSERT INTO t (k, v) VALUES (?, ?)', ['after', 1]);
      }),
      /statement on the store instead of on its handle/,
    );
    assert.deepEqual(await store.many('SELECT k FROM t ORDER BY k'), [{ k: 'wrong' }]);
  }),
);

test('write-behind: rows that meet another process holding the lock are kept and written once it is free', async () => {
  const opened = openTestStore();
  const other = openTestStore([], opened.file);
  try {
    await opened.store.exec('CREATE TABLE wb (n INTEGER NOT NULL)');
    const lost: number[] = [];
    const queue = new WriteBehind<number>(
      opened.store,
      (t, n) => t.run('INSERT INTO wb (n) VALUES (?)', [n]),
      (_err, rows) => void lost.push(...rows),
    );
    const holder = other.store.sqlite();
    holder.exec('BEGIN IMMEDIATE');
    queue.push(1);
    queue.push(2);
    // Longer than the store's 5 s wait: the flush gives up once, and the rows must survive it.
    await new Promise((resolve) => setTimeout(resolve, 5_600));
    holder.exec('COMMIT');
    await waitFor(async () => (await opened.store.one<{ c: number }>('SELECT COUNT(*) AS c FROM wb'))!.c === 2, 8_000, 'the rows to be written');
    assert.deepEqual(lost, []);
    assert.deepEqual(await opened.store.many('SELECT n FROM wb ORDER BY n'), [{ n: 1 }, { n: 2 }]);
  } finally {
    other.close();
    opened.close();
  }
});
