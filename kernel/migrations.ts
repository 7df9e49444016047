import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { located } from './loader/bundle.ts';

/** Which engine's file was applied: `migrations/NNNN_name.sql` (SQLite) or `migrations/postgres/NNNN_name.sql`. */
const DIALECT = 'sqlite';
const LEDGER = `CREATE TABLE IF NOT EXISTS kernel_migrations (
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
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql'));
  for (const file of files.sort()) {
    const id = path.basename(file, '.sql');
    const where = path.join(dir, file);
    const sql = readFileSync(where, 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    if (!done.has(id)) pending.push({ id, file: where, sql, checksum });
    else if (done.get(id) !== checksum)
      throw located(
        new Error(`migration ${moduleId}/${file} was changed after it was applied; add a new migration instead`),
        where,
      );
  }
  return pending;
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
