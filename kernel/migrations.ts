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

export interface MigrationResult {
  applied: string[];
}

/**
 * Applies a module's `migrations/NNNN_name.sql` files in lexical order, each
 * once, each in its own transaction, recorded per module. An applied file
 * that changed afterwards is an error: it is never re-applied.
 */
export function runMigrations(db: Database, moduleId: string, moduleDir: string): MigrationResult {
  db.exec(LEDGER);
  const dir = path.join(moduleDir, 'migrations');
  if (!existsSync(dir)) return { applied: [] };
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const done = new Map(
    (db.prepare('SELECT id, checksum FROM kernel_migrations WHERE module = ?').all(moduleId) as Array<{ id: string; checksum: string }>).map((r) => [
      r.id,
      r.checksum,
    ]),
  );
  const insert = db.prepare('INSERT INTO kernel_migrations (module, id, checksum, applied_at) VALUES (?, ?, ?, ?)');
  const applied: string[] = [];
  for (const file of files) {
    const id = file.replace(/\.sql$/, '');
    const sql = readFileSync(path.join(dir, file), 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    const previous = done.get(id);
    if (previous !== undefined) {
      if (previous !== checksum) throw new Error(`migration ${moduleId}/${file} was changed after it was applied; add a new migration instead`);
      continue;
    }
    const apply = () => {
      db.exec(sql);
      insert.run(moduleId, id, checksum, new Date().toISOString());
    };
    try {
      if (sql.startsWith('-- kernel:no-transaction')) apply();
      else db.transaction(apply)();
    } catch (err) {
      throw new Error(`migration ${moduleId}/${file} failed: ${(err as Error).message}`);
    }
    applied.push(id);
  }
  return { applied };
}
