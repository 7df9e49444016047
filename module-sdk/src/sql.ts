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

/** Per database, the write-behind queues that have rows waiting for the next flush (one transaction for all of them). */
const waiting = new Map<Database, Set<WriteBehind<never>>>();

function schedule(db: Database, queue: WriteBehind<never>): void {
  let queues = waiting.get(db);
  if (!queues) {
    waiting.set(db, (queues = new Set()));
    setImmediate(() => flushWaiting(db));
  }
  queues.add(queue);
}

/**
 * One transaction for every queue of the database that has rows, each in a savepoint so that one failing loses only
 * its own rows. One commit instead of one per queue: fewer WAL frames, so fewer of the checkpoints a commit pays.
 */
/** better-sqlite3 builds a transaction function anew on each db.transaction() call: one per database is kept. */
const sharedTransactions = new WeakMap<Database, (taken: ReadonlyArray<readonly [WriteBehind<never>, never[]]>) => void>();

function sharedTransaction(db: Database) {
  let run = sharedTransactions.get(db);
  if (!run) {
    run = db.transaction((taken: ReadonlyArray<readonly [WriteBehind<never>, never[]]>) => {
      for (const [queue, rows] of taken) queue.write(rows);
    });
    sharedTransactions.set(db, run);
  }
  return run;
}

function flushWaiting(db: Database): void {
  const queues = waiting.get(db);
  waiting.delete(db);
  if (!queues) return;
  const taken = [...queues].map((queue) => [queue, queue.take()] as const).filter(([, rows]) => rows.length);
  if (!taken.length) return;
  try {
    sharedTransaction(db)(taken);
  } catch (err) {
    for (const [queue, rows] of taken) queue.failed(err, rows);
  }
}

/**
 * Rows written just after the current piece of work has answered: push() queues a row, and right after the
 * current I/O callback (setImmediate, so after the HTTP answer went out) every queue of the database with rows is
 * written in one transaction. Bookkeeping (turn traces, usage rows, the messages of a turn) then costs the caller
 * no commit, and a turn's writes share one. Reads of the table must flush() first, and the module flushes when it
 * stops; a failed write reaches onError with the rows it lost.
 */
export class WriteBehind<T> {
  private queued: T[] = [];
  private readonly writeAll: (rows: readonly T[]) => void;

  constructor(
    private readonly db: Database,
    writeRow: (row: T) => void,
    private readonly onError: (err: unknown, rows: readonly T[]) => void,
  ) {
    this.writeAll = db.transaction((rows: readonly T[]) => {
      for (const row of rows) writeRow(row);
    });
  }

  push(row: T): void {
    this.queued.push(row);
    schedule(this.db, this as unknown as WriteBehind<never>);
  }

  /** Writes what is queued, now (its own transaction). */
  flush(): void {
    const rows = this.take();
    if (rows.length) this.write(rows);
  }

  /** The rows queued so far, handed over to be written (by flush or the shared flush). */
  take(): T[] {
    const rows = this.queued;
    this.queued = [];
    return rows;
  }

  /** Writes rows in a transaction (a savepoint inside the shared one); a failure is reported, not thrown. */
  write(rows: readonly T[]): void {
    try {
      this.writeAll(rows);
    } catch (err) {
      this.failed(err, rows);
    }
  }

  failed(err: unknown, rows: readonly T[]): void {
    this.onError(err, rows);
  }
}
