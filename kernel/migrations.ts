import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';

const LEDGER = `CREATE TABLE IF NOT EXISTS kernel_migrations (
  module TEXT NOT NULL,
  id TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  PRIMARY KEY (module, id)
)`;

/** A first line that opts a migration out of its transaction (PRAGMA foreign_keys is a no-op inside one). */
const NO_TRANSACTION = '-- kernel:no-transaction';

interface Migration {
  id: string;
  file: string;
  sql: string;
  checksum: string;
}

/**
 * A module's `migrations/NNNN_name.sql` files not applied yet, in lexical
 * order. An applied file that changed afterwards is an error: it is never re-applied.
 */
export function pendingMigrations(db: Database, moduleId: string, moduleDir: string): Migration[] {
  db.exec(LEDGER);
  const dir = path.join(moduleDir, 'migrations');
  if (!existsSync(dir)) return [];
  const done = new Map(
    (db.prepare('SELECT id, checksum FROM kernel_migrations WHERE module = ?').all(moduleId) as Array<{ id: string; checksum: string }>).map((r) => [
      r.id,
      r.checksum,
    ]),
  );
  const pending: Migration[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const id = file.replace(/\.sql$/, '');
    const sql = readFileSync(path.join(dir, file), 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    const previous = done.get(id);
    if (previous === undefined) pending.push({ id, file, sql, checksum });
    else if (previous !== checksum) throw new Error(`migration ${moduleId}/${file} was changed after it was applied; add a new migration instead`);
  }
  return pending;
}

export const needsNoTransaction = (migrations: readonly Migration[]): boolean => migrations.some((m) => m.sql.startsWith(NO_TRANSACTION));

/** Applies the migrations, each once, each in its own transaction (a savepoint inside an open one), recorded per module. */
export function applyMigrations(db: Database, moduleId: string, migrations: readonly Migration[]): string[] {
  const insert = db.prepare('INSERT INTO kernel_migrations (module, id, checksum, applied_at) VALUES (?, ?, ?, ?)');
  for (const m of migrations) {
    const apply = () => {
      db.exec(m.sql);
      insert.run(moduleId, m.id, m.checksum, new Date().toISOString());
    };
    try {
      if (m.sql.startsWith(NO_TRANSACTION)) apply();
      else db.transaction(apply)();
    } catch (err) {
      throw new Error(`migration ${moduleId}/${m.file} failed: ${(err as Error).message}`);
    }
  }
  return migrations.map((m) => m.id);
}
