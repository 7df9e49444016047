import type { Database, Statement } from 'better-sqlite3';

const caches = new WeakMap<Database, Map<string, Statement>>();

/**
 * A prepared statement for this SQL, prepared once per database and reused:
 * preparing costs more than running most statements.
 */
export function prepared<Params extends unknown[] = unknown[]>(db: Database, sql: string): Statement<Params> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
  }
  return stmt as Statement<Params>;
}
