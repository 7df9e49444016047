import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Queries, Store } from '@talon/module-sdk';
import { located } from './loader/bundle.ts';
import { createTables, lockMigrations } from './store/schema.ts';

/** Which engine's file was applied: `migrations/NNNN_name.sql` (SQLite) or `migrations/postgres/NNNN_name.sql`. */
const DIALECT = 'sqlite';
export const LEDGER = `CREATE TABLE IF NOT EXISTS kernel_migrations (
  module TEXT NOT NULL,
  id TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  dialect TEXT NOT NULL DEFAULT 'sqlite',
  PRIMARY KEY (module, id)
)`;

/** The ledger, with the dialect column a ledger written before it lacks. */
function ensureLedger(db: Database): void {
  db.exec(LEDGER);
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('kernel_migrations');
  if (!columns.includes('dialect'))
    db.exec("ALTER TABLE kernel_migrations ADD COLUMN dialect TEXT NOT NULL DEFAULT 'sqlite'");
}

/** A first line that opts a migration out of its transaction (PRAGMA foreign_keys is a no-op inside one). */
const NO_TRANSACTION = '-- kernel:no-transaction';

/** `file`: where it is, for the `location` of an error (GET /api/modules). */
type Migration = { id: string; file: string; sql: string; checksum: string };

/** A module's `migrations/NNNN_name.sql` files not applied yet, in lexical order; an applied file must never change. */
export function pendingMigrations(db: Database, moduleId: string, moduleDir: string): Migration[] {
  ensureLedger(db);
  const dir = path.join(moduleDir, 'migrations');
  if (!existsSync(dir)) return [];
  const applied = db
    .prepare('SELECT id, checksum FROM kernel_migrations WHERE module = ? AND dialect = ?')
    .all(moduleId, DIALECT) as Array<{
    id: string;
    checksum: string;
  }>;
  const done = new Map(applied.map((m) => [m.id, m.checksum]));
  const pending: Migration[] = [];
  for (const file of sqlFiles(dir)) {
    const m = readMigration(dir, file);
    if (!done.has(m.id)) pending.push(m);
    else if (done.get(m.id) !== m.checksum)
      throw located(
        new Error(`migration ${moduleId}/${file} was changed after it was applied; add a new migration instead`),
        m.file,
      );
  }
  return pending;
}

/** The `.sql` files of a migrations folder, in lexical order (none when it does not exist). */
const sqlFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.sql'))
        .sort()
    : [];

/** A migration file: its id (the name without `.sql`), its text and the checksum the ledger keeps. */
function readMigration(dir: string, file: string): Migration {
  const where = path.join(dir, file);
  const sql = readFileSync(where, 'utf8');
  return {
    id: path.basename(file, '.sql'),
    file: where,
    sql,
    checksum: createHash('sha256').update(sql).digest('hex'),
  };
}

export const needsNoTransaction = (migrations: readonly Migration[]): boolean =>
  migrations.some((m) => m.sql.startsWith(NO_TRANSACTION));

/** Applies the migrations, each in its own transaction (a savepoint inside an open one), recorded per module. */
export function applyMigrations(db: Database, moduleId: string, migrations: readonly Migration[]): void {
  const record = db.prepare(
    'INSERT INTO kernel_migrations (module, id, checksum, applied_at, dialect) VALUES (?, ?, ?, ?, ?)',
  );
  for (const m of migrations) {
    const apply = () => {
      db.exec(m.sql);
      record.run(moduleId, m.id, m.checksum, new Date().toISOString(), DIALECT);
    };
    try {
      if (m.sql.startsWith(NO_TRANSACTION)) apply();
      else db.transaction(apply)();
    } catch (err) {
      throw located(new Error(`migration ${moduleId}/${m.id}.sql failed: ${(err as Error).message}`), m.file);
    }
  }
}

/**
 * A node found a migration applied that it does not have: the database was migrated by a newer version. It refuses to
 * start instead of running code against a schema it does not know.
 */
export class SchemaTooNew extends Error {
  override name = 'SchemaTooNew';
}

const POSTGRES = 'postgres';

/** The ledger on PostgreSQL (the same table; created under the migration lock, see createTables). */
export const prepareLedger = (store: Store): Promise<void> =>
  createTables(store, { sqlite: [LEDGER], postgres: [LEDGER] });

/**
 * A module's PostgreSQL migrations, `migrations/postgres/NNNN_name.sql`, in lexical order. Their ids are the SQLite
 * files' ids: a SQLite migration without its PostgreSQL file (or the reverse) stops the module, naming the file.
 */
export function postgresMigrations(moduleId: string, moduleDir: string): Migration[] {
  const dir = path.join(moduleDir, 'migrations');
  const sqliteIds = sqlFiles(dir).map((f) => path.basename(f, '.sql'));
  const files = sqlFiles(path.join(dir, POSTGRES));
  const ids = new Set(files.map((f) => path.basename(f, '.sql')));
  const missing = sqliteIds.find((id) => !ids.has(id));
  if (missing)
    throw located(
      new Error(
        `module '${moduleId}' cannot run on PostgreSQL: its migration ${missing}.sql has no PostgreSQL counterpart ` +
          `migrations/postgres/${missing}.sql (docs/decisions-fleet.md maps the types)`,
      ),
      path.join(dir, `${missing}.sql`),
    );
  const extra = [...ids].find((id) => !sqliteIds.includes(id));
  if (extra)
    throw located(
      new Error(
        `migration ${moduleId}/postgres/${extra}.sql has no SQLite file ${extra}.sql: the ids must be the same`,
      ),
      path.join(dir, POSTGRES, `${extra}.sql`),
    );
  return files.map((file) => {
    const m = readMigration(path.join(dir, POSTGRES), file);
    if (m.sql.startsWith(NO_TRANSACTION))
      throw located(new Error(`migration ${moduleId}/postgres/${file}: ${NO_TRANSACTION} is for SQLite only`), m.file);
    return m;
  });
}

/**
 * The migrations of `files` not in the ledger yet. An applied file must not have changed, and every applied id must be
 * one of the files: an id this node does not know means a newer version migrated the database (SchemaTooNew).
 */
async function pendingOn(q: Queries, moduleId: string, files: readonly Migration[]): Promise<Migration[]> {
  const applied = await q.many<{ id: string; checksum: string }>(
    'SELECT id, checksum FROM kernel_migrations WHERE module = ? AND dialect = ? ORDER BY id',
    [moduleId, POSTGRES],
  );
  const known = new Map(files.map((m) => [m.id, m]));
  const unknown = applied.find((row) => !known.has(row.id));
  if (unknown)
    throw new SchemaTooNew(
      `the database has migration ${moduleId}/${unknown.id}, which this version does not have: a newer version ` +
        'migrated it; run that version (or newer) here too',
    );
  for (const row of applied)
    if (known.get(row.id)!.checksum !== row.checksum)
      throw located(
        new Error(
          `migration ${moduleId}/postgres/${row.id}.sql was changed after it was applied; add a new migration instead`,
        ),
        known.get(row.id)!.file,
      );
  const done = new Set(applied.map((row) => row.id));
  return files.filter((m) => !done.has(m.id));
}

/** The ids of a module's PostgreSQL migrations not applied yet (the ledger must exist: prepareLedger). */
export async function pendingPostgres(store: Store, moduleId: string, moduleDir: string): Promise<string[]> {
  return (await pendingOn(store, moduleId, postgresMigrations(moduleId, moduleDir))).map((m) => m.id);
}

/**
 * Applies a module's pending PostgreSQL migrations in one transaction under the migration lock, each in a savepoint
 * and recorded with dialect 'postgres'; the ledger is read again under the lock, so a process that waited for another
 * applies nothing twice. Returns the ids applied.
 */
export async function migratePostgres(store: Store, moduleId: string, moduleDir: string): Promise<string[]> {
  const files = postgresMigrations(moduleId, moduleDir);
  if (!(await pendingOn(store, moduleId, files)).length) return [];
  return store.tx(async (t) => {
    await lockMigrations(t);
    const pending = await pendingOn(t, moduleId, files);
    for (const m of pending) {
      try {
        await t.tx(async (step) => {
          await step.exec(m.sql);
          await step.run(
            'INSERT INTO kernel_migrations (module, id, checksum, applied_at, dialect) VALUES (?, ?, ?, ?, ?)',
            [moduleId, m.id, m.checksum, new Date().toISOString(), POSTGRES],
          );
        });
      } catch (err) {
        throw located(
          new Error(`migration ${moduleId}/postgres/${m.id}.sql failed: ${(err as Error).message}`),
          m.file,
        );
      }
    }
    return pending.map((m) => m.id);
  });
}
