import { lockInTransaction, type Queries, type Store } from '@talon/module-sdk';

export type TableDdl = { sqlite: readonly string[]; postgres: readonly string[] };

/**
 * Creates a kernel component's tables (`CREATE TABLE IF NOT EXISTS …`). On PostgreSQL that statement races when two
 * processes run it at once (the loser fails on the catalogue's unique index), so there it runs under the migration
 * lock.
 */
export async function createTables(store: Store, ddl: TableDdl): Promise<void> {
  if (store.dialect === 'sqlite') {
    for (const statement of ddl.sqlite) await store.exec(statement);
    return;
  }
  await store.tx(async (t) => {
    await lockMigrations(t);
    for (const statement of ddl.postgres) await t.exec(statement);
  });
}

/**
 * The lock every process takes on PostgreSQL before it creates the kernel's tables or reads the migration ledger to
 * migrate: one key for the whole database, held to the end of the transaction, so that processes starting together
 * migrate once (the others wait, then find the ledger written).
 */
export const lockMigrations = (t: Queries): Promise<void> => lockInTransaction(t, 'talon:migrations');
