import type { Database, Statement } from 'better-sqlite3';
import { isBusy, type Params, type Queries, type Store } from '@talon/module-sdk';
import { Mutex } from './mutex.ts';

/** How long a statement waits for another process's write lock before it fails with SQLITE_BUSY. */
const BUSY_WAIT_MS = 5_000;

/** Prepared statements kept per connection; SQL built at run time (IN lists) would otherwise grow the cache forever. */
const STATEMENT_CACHE = 1000;

export interface SqliteStoreOptions {
  /** Fail a transaction that awaited something other than its own statements (dev mode and tests). */
  checkAwaits?: boolean;
}

/**
 * The store on the one better-sqlite3 connection. Statements run synchronously, so a transaction that awaits only its
 * own statements finishes within one turn of the event loop; the mutex keeps any other statement (or transaction) out
 * of an open transaction until it ends. Transactions begin IMMEDIATE: they take the write lock at once, so two
 * processes on one file never deadlock upgrading a read.
 */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  private readonly statements = new Map<string, Statement>();
  private readonly mutex = new Mutex();
  private savepoints = 0;

  constructor(
    private readonly db: Database,
    private readonly options: SqliteStoreOptions = {},
  ) {
    // SQLite's busy handler sleeps in the calling thread: a process waiting for another's write lock would stop
    // serving. The store waits between attempts instead (whenFree), and the event loop goes on.
    db.pragma('busy_timeout = 0');
  }

  sqlite(): Database {
    return this.db;
  }

  pick<T>(choices: { sqlite: T; postgres: T }): T {
    return choices.sqlite;
  }

  one<R>(sql: string, params?: Params): Promise<R | undefined> {
    return this.outside(() => this.statement(sql).get(...(params ?? [])) as R | undefined);
  }

  many<R>(sql: string, params?: Params): Promise<R[]> {
    return this.outside(() => this.statement(sql).all(...(params ?? [])) as R[]);
  }

  run(sql: string, params?: Params): Promise<{ changes: number }> {
    return this.outside(() => ({ changes: this.statement(sql).run(...(params ?? [])).changes }));
  }

  exec(script: string): Promise<void> {
    return this.outside(() => void this.db.exec(script));
  }

  async tx<T>(work: (t: Queries) => Promise<T>): Promise<T> {
    const release = await this.mutex.lock();
    try {
      await whenFree(() => this.db.exec('BEGIN IMMEDIATE'));
    } catch (err) {
      release();
      throw err;
    }
    const handle = new TxHandle(this, {});
    // A transaction still open at the next macrotask awaited something else: roll it back and free the connection,
    // so that a statement it awaits on the store (which would wait for it forever) runs, and its next use of `t` fails.
    const opened = this.options.checkAwaits ? new Error('opened') : undefined;
    const watch = this.options.checkAwaits
      ? setImmediate(() => {
          handle.fail(foreignAwait(opened));
          this.db.exec('ROLLBACK');
          release();
        })
      : undefined;
    try {
      const result = await work(handle);
      handle.check();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      if (!handle.root.failed) this.db.exec('ROLLBACK');
      throw err;
    } finally {
      handle.end();
      if (watch) clearImmediate(watch);
      release();
    }
  }

  /**
   * A statement outside any transaction: at once when none is open, else after it (never inside it). One that finds
   * another process holding the write lock is tried again a little later.
   */
  private outside<T>(statement: () => T): Promise<T> {
    if (!this.mutex.locked) {
      try {
        return Promise.resolve(statement());
      } catch (err) {
        if (!isBusy(err)) return Promise.reject(err);
      }
    }
    // Waits its turn (and, while another process holds the write lock, retries) holding the connection, so that it
    // neither runs inside a transaction begun meanwhile nor overtakes statements issued after it.
    return this.mutex.lock().then(async (release) => {
      try {
        return await whenFree(statement);
      } finally {
        release();
      }
    });
  }

  private statement(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= STATEMENT_CACHE) this.statements.delete(this.statements.keys().next().value!);
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** A savepoint inside the open transaction (`t.tx`). */
  async nested<T>(work: (t: Queries) => Promise<T>, root: TxState): Promise<T> {
    const name = `talon_sp${++this.savepoints}`;
    this.db.exec(`SAVEPOINT ${name}`);
    const handle = new TxHandle(this, root);
    try {
      const result = await work(handle);
      handle.check();
      this.db.exec(`RELEASE ${name}`);
      return result;
    } catch (err) {
      if (!root.failed) this.db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw err;
    } finally {
      handle.end();
    }
  }

  /** Statements of an open transaction (TxHandle), which holds the mutex. */
  direct = {
    one: <R>(sql: string, params?: Params) => this.statement(sql).get(...(params ?? [])) as R | undefined,
    many: <R>(sql: string, params?: Params) => this.statement(sql).all(...(params ?? [])) as R[],
    run: (sql: string, params?: Params) => ({ changes: this.statement(sql).run(...(params ?? [])).changes }),
    exec: (script: string) => void this.db.exec(script),
  };
}

/** Shared by a transaction and its savepoints: set when the dev check rolled it back. */
interface TxState {
  failed?: Error;
}

/** A transaction's `t`: runs on the connection directly (the transaction holds the mutex); unusable once it ends. */
class TxHandle implements Queries {
  readonly dialect = 'sqlite' as const;
  private ended = false;
  private readonly savepoints = new Mutex();
  constructor(
    private readonly store: SqliteStore,
    readonly root: TxState,
  ) {}

  pick<T>(choices: { sqlite: T; postgres: T }): T {
    return choices.sqlite;
  }

  one<R>(sql: string, params?: Params): Promise<R | undefined> {
    return settle(() => (this.check(), this.store.direct.one<R>(sql, params)));
  }

  many<R>(sql: string, params?: Params): Promise<R[]> {
    return settle(() => (this.check(), this.store.direct.many<R>(sql, params)));
  }

  run(sql: string, params?: Params): Promise<{ changes: number }> {
    return settle(() => (this.check(), this.store.direct.run(sql, params)));
  }

  exec(script: string): Promise<void> {
    return settle(() => (this.check(), this.store.direct.exec(script)));
  }

  /** Savepoints one after another: two open at once from one handle would release each other. */
  async tx<T>(work: (t: Queries) => Promise<T>): Promise<T> {
    this.check();
    const release = await this.savepoints.lock();
    try {
      return await this.store.nested(work, this.root);
    } finally {
      release();
    }
  }

  check(): void {
    if (this.ended) throw new Error('this transaction has ended: its handle was used after its work resolved');
    if (this.root.failed) throw this.root.failed;
  }

  fail(err: Error): void {
    this.root.failed = err;
  }

  end(): void {
    this.ended = true;
  }
}

function foreignAwait(opened: Error | undefined): Error {
  const where = opened?.stack?.split('\n').slice(2, 6).join(' <- ') ?? '';
  return new Error(
    'a transaction awaited something other than its own statements (a fetch, a timer, or a statement on the store ' +
      `instead of on its handle \`t\`); it held the connection, so it was rolled back. Opened at ${where}`,
  );
}

/**
 * Runs a statement; while another process holds the lock, again after a growing pause (1 ms up to 50 ms), for up to
 * BUSY_WAIT_MS in all.
 */
async function whenFree<T>(attempt: () => T): Promise<T> {
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      return attempt();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Runs a synchronous statement as a promise: a throw becomes a rejection. */
function settle<T>(statement: () => T): Promise<T> {
  try {
    return Promise.resolve(statement());
  } catch (err) {
    return Promise.reject(err);
  }
}
