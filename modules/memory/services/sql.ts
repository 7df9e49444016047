import type { Database, Statement } from 'better-sqlite3';

/**
 * db.prepare with a cache by SQL text: preparing costs a parse each time and
 * leaves native statement handles for the GC; searches run a handful of
 * statements per request.
 */
export function cachedPrepare(db: Database) {
  const cache = new Map<string, Statement>();
  return function prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt as unknown as Statement<P, R>;
  };
}
