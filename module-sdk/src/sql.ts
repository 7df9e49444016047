import type { Database, Statement } from 'better-sqlite3';

const caches = new WeakMap<Database, Map<string, Statement>>();

/**
 * A prepared statement for this SQL, prepared once per database and reused:
 * preparing costs more than running most statements. P types the parameters,
 * R the rows.
 */
export function prepared<P extends unknown[] = unknown[], R = unknown>(db: Database, sql: string): Statement<P, R> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
  }
  return stmt as unknown as Statement<P, R>;
}

/** `prepared` bound to one database, for services that run many statements. */
export function statements(db: Database) {
  return <P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> => prepared<P, R>(db, sql);
}
