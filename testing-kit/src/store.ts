import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Store } from '@talon/module-sdk';
import { SqliteStore } from '../../kernel/store/sqlite.ts';
import { PostgresStore } from '../../kernel/store/postgres.ts';
import { migratePostgres, prepareLedger } from '../../kernel/migrations.ts';
import { startPostgres } from './servers/postgres.ts';

export interface TestStore {
  store: Store;
  /** The database file (a second connection, another "process", can open it). */
  file: string;
  close(): void;
}

/**
 * A store on a fresh SQLite file for a module's unit tests, with the migrations of the given module folders applied
 * (their `migrations/*.sql`, in order) and the foreign-await check on.
 */
export function openTestStore(moduleDirs: readonly string[] = [], file?: string): TestStore {
  const dir = file ? undefined : mkdtempSync(path.join(tmpdir(), 'talon-store-'));
  const where = file ?? path.join(dir!, 'talon.db');
  const db = new Database(where);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  for (const moduleDir of moduleDirs) {
    const migrations = path.join(moduleDir, 'migrations');
    for (const name of readdirSync(migrations)
      .filter((f) => f.endsWith('.sql'))
      .sort())
      db.exec(readFileSync(path.join(migrations, name), 'utf8'));
  }
  return {
    store: new SqliteStore(db, { checkAwaits: true }),
    file: where,
    close() {
      db.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PostgresTestStore {
  store: Store;
  /** The fresh database's URL (another store, another "process", can open it). */
  url: string;
  close(): Promise<void>;
}

/**
 * A store on a fresh database of this test process's PostgreSQL server (startPostgres), with the given module
 * folders' `migrations/postgres/*.sql` applied as the kernel applies them (ledger, lock), for a module's unit tests on
 * PostgreSQL. close() closes the pool and drops the database.
 */
export async function openPostgresTestStore(moduleDirs: readonly string[] = []): Promise<PostgresTestStore> {
  const server = await startPostgres();
  const url = await server.createDatabase();
  const store = new PostgresStore({ url });
  try {
    await prepareLedger(store);
    for (const dir of moduleDirs) await migratePostgres(store, path.basename(dir), dir);
  } catch (err) {
    await store.close();
    await server.stop();
    throw err;
  }
  return {
    store,
    url,
    async close() {
      await store.close();
      await server.dropDatabase(url).catch(() => undefined);
      await server.stop();
    },
  };
}

/**
 * A store with the given module folders' migrations applied, on the engine the test run is for (TALON_TEST_DB, as
 * startTestKernel's kernels): openPostgresTestStore's database with TALON_TEST_DB=postgres, else openTestStore's file.
 */
export async function openTestDbStore(moduleDirs: readonly string[] = []): Promise<TestStore | PostgresTestStore> {
  return process.env.TALON_TEST_DB === 'postgres' ? openPostgresTestStore(moduleDirs) : openTestStore(moduleDirs);
}

/**
 * Makes writes fail until the returned undo is called, to test what a module does when its commit fails: on SQLite the
 * connection becomes read-only (every write fails); on PostgreSQL, where a pool's connections have no such switch, a
 * trigger refuses every insert and update of `table`.
 */
export async function refuseWrites(store: Store, table: string): Promise<() => Promise<void>> {
  if (store.dialect === 'sqlite') {
    const db = store.sqlite();
    db.pragma('query_only = ON');
    return async () => void db.pragma('query_only = OFF');
  }
  const name = `test_refuse_${table}`;
  await store.exec(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
    CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`);
  return () => store.exec(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`);
}

/**
 * A store on the database a (stopped) test kernel ran on, to change what the next kernel on its home will find (the
 * downtime of a restart test): the home's SQLite file, or the kernel's PostgreSQL database.
 */
export async function openKernelStore(kernel: { home: string; databaseUrl?: string }): Promise<{ store: Store; close(): Promise<void> }> {
  if (kernel.databaseUrl) {
    const store = new PostgresStore({ url: kernel.databaseUrl });
    return { store, close: () => store.close() };
  }
  const db = new Database(path.join(kernel.home, 'talon.db'));
  db.pragma('busy_timeout = 5000');
  return { store: new SqliteStore(db), close: async () => void db.close() };
}
