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

/**
 * Rows written just after the current piece of work has answered: push() queues a row and schedules one
 * transaction (setImmediate, so after the HTTP answer went out) that writes everything queued. Bookkeeping
 * (turn traces, usage rows) then costs the caller no commit. Reads of the table must flush() first, and the
 * module flushes when it stops; a failed write reaches onError with the rows it lost.
 */
export class WriteBehind<T> {
  private queued: T[] = [];
  private scheduled?: NodeJS.Immediate;

  constructor(
    private readonly db: Database,
    private readonly write: (row: T) => void,
    private readonly onError: (err: unknown, rows: readonly T[]) => void,
  ) {}

  push(row: T): void {
    this.queued.push(row);
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Writes what is queued, now (one transaction). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (!this.queued.length) return;
    const rows = this.queued;
    this.queued = [];
    try {
      this.db.transaction(() => rows.forEach(this.write))();
    } catch (err) {
      this.onError(err, rows);
    }
  }
}
