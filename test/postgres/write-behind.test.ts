/**
 * WriteBehind on PostgreSQL (a real server, testing-kit startPostgres), where a commit is a network round trip: flush()
 * returns only once the rows of its queue are committed, also those the shared background flush (or another flush())
 * had already taken and was still writing. On SQLite those writes finish within the tick, so the gap never shows.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { WriteBehind, type Queries } from '@talon/module-sdk';
import { postgresMissing, startPostgres, type PostgresServer } from '@talon/testing';
import { PostgresStore } from '../../kernel/store/postgres.ts';

describe('write-behind on PostgreSQL', { skip: postgresMissing() }, () => {
  let server: PostgresServer;
  let url: string;
  let store: PostgresStore;
  before(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    store = new PostgresStore({ url });
    await store.exec('CREATE TABLE wb (q TEXT NOT NULL, n BIGINT NOT NULL)');
  });
  after(async () => {
    await store?.close();
    if (url) await server.dropDatabase(url);
    await server?.stop();
  });

  /** A queue of table wb whose rows take a while to write (so a flush is caught while it is still writing them). */
  const slowQueue = (name: string, lost: number[]) =>
    new WriteBehind<number>(
      store,
      async (t: Queries, n) => {
        await t.one('SELECT pg_sleep(0.05)');
        await t.run('INSERT INTO wb (q, n) VALUES (?, ?)', [name, n]);
      },
      (_err, rows) => void lost.push(...rows),
    );
  const rowsOf = async (name: string) => (await store.many<{ n: number }>('SELECT n FROM wb WHERE q = ? ORDER BY n', [name])).map((r) => r.n);

  test('flush() waits for the rows the shared background flush took and has not committed yet', async () => {
    const lost: number[] = [];
    const queue = slowQueue('shared', lost);
    queue.push(1);
    queue.push(2);
    // The shared flush runs at setImmediate: it has taken both rows and is writing them in its transaction.
    await nextTurn();
    await queue.flush();
    assert.deepEqual(await rowsOf('shared'), [1, 2]);
    assert.deepEqual(lost, []);
  });

  test('flush() waits for the rows another flush() took and is still writing', async () => {
    const lost: number[] = [];
    const queue = slowQueue('flushes', lost);
    queue.push(1);
    const first = queue.flush();
    await queue.flush();
    assert.deepEqual(await rowsOf('flushes'), [1]);
    await first;
    // Rows queued since: written by the next flush, once; nothing is written twice.
    queue.push(2);
    await queue.flush();
    assert.deepEqual(await rowsOf('flushes'), [1, 2]);
    assert.deepEqual(lost, []);
  });

  test('flush() waits for a row pushed before it that a later shared flush took while it waited for an earlier write', async () => {
    const lost: number[] = [];
    const queue = slowQueue('later', lost);
    queue.push(1);
    await nextTurn(); // the shared flush is writing row 1
    queue.push(2); // a second shared flush will take row 2 at the next turn, while flush() below waits for row 1
    await queue.flush();
    assert.deepEqual(await rowsOf('later'), [1, 2], 'row 2, pushed before flush(), is committed when it returns');
    assert.deepEqual(lost, []);
  });
});
