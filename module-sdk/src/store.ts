import type { Database } from 'better-sqlite3';

/** A value a statement binds or a row holds. Booleans are stored as 0/1, times as epoch-ms integers. */
export type SqlValue = string | number | bigint | Uint8Array | null;
export type Params = readonly SqlValue[];
export type Dialect = 'sqlite' | 'postgres';

/**
 * Statements, in the portable subset: `?` placeholders, `ON CONFLICT … DO`, `RETURNING`, `CHECK`, integers up to
 * 2^53. Anything one engine has and the other lacks goes through `pick`.
 */
export interface Queries {
  readonly dialect: Dialect;
  /** The first row, or undefined. */
  one<R = Record<string, unknown>>(sql: string, params?: Params): Promise<R | undefined>;
  /** Every row. */
  many<R = Record<string, unknown>>(sql: string, params?: Params): Promise<R[]>;
  /** A statement that returns no rows (use `one`/`many` with RETURNING for generated values). */
  run(sql: string, params?: Params): Promise<{ changes: number }>;
  /** A script of several statements, no parameters (schema work; prefer migrations). */
  exec(script: string): Promise<void>;
  /**
   * Runs `work` in a transaction: committed when it resolves, rolled back when it throws. Inside, use only `t` (a
   * statement on the store itself waits for the transaction to end, so it would wait forever) and await nothing
   * but `t`'s statements: the transaction holds the connection (dev mode and tests check this). Nested: a savepoint.
   */
  tx<T>(work: (t: Queries) => Promise<T>): Promise<T>;
  /** The statement (or value) for this engine, for the few that differ. */
  pick<T>(choices: { sqlite: T; postgres: T }): T;
}

/** The service's database, shared by every module; each prefixes its tables with its id ('-' as '_'). */
export interface Store extends Queries {
  /**
   * The raw better-sqlite3 connection. Not portable: a module that uses it runs on SQLite only and must say so in
   * its module.toml description. Throws on another engine.
   */
  sqlite(): Database;
}

/**
 * This process among the processes that share the database (one home today, a fleet later). Each process is a
 * node with a heartbeat; a node that misses three beats is dead, and the work it had claimed is taken over.
 */
export interface NodeAccess {
  /** This process's node id (new at every start). */
  readonly id: string;
  /** Ids of the nodes whose heartbeat is fresh, this one included. */
  live(): Promise<string[]>;
  /** The API address (host:port) a live node listens on, to relay a request to it; undefined if it is not live. */
  address(nodeId: string): Promise<string | undefined>;
  /**
   * Called, on every live node, for each node found dead (also at start for nodes that died while none ran), once
   * per node per process: take over its claims with a conditional update, so that one node wins. Ends when the
   * module copy stops.
   */
  onDead(handler: (nodeId: string) => unknown): void;
  /** How long a claim lasts without renewal: a lease written now should end at `Date.now() + leaseMs`. */
  readonly leaseMs: number;
  /**
   * Whether this node may take new work: false once it no longer beats (it is stopping, or another node found it
   * silent and took its claims over). Check it before each claim: the others treat the node as gone, so work it took
   * now would run twice.
   */
  readonly active: boolean;
  /** The nodes seen in the last 24 hours (rows of gone nodes are kept that long), oldest boot first; read-only. */
  list(): Promise<NodeInfo[]>;
}

/** A node as the others see it: what an operator needs to tell the processes apart, nothing secret. */
export interface NodeInfo {
  id: string;
  host: string;
  pid: number;
  /** The API address (host:port) it listens on; null while it starts. */
  listen: string | null;
  /** As its row says: a node killed a moment ago stays 'live' until a live node finds it silent (three beats). */
  state: 'live' | 'stopped' | 'dead';
  /** Epoch ms. */
  bootAt: number;
  /** Epoch ms of its last beat. */
  heartbeatAt: number;
  /** Whether it is this process. */
  self: boolean;
}

/**
 * Cache invalidation across processes. A module that caches rows notes each change of them; the other processes'
 * copies of the module get `on` callbacks within about a quarter of a second on SQLite, within milliseconds on
 * PostgreSQL (LISTEN/NOTIFY). Topics are the module's own.
 */
export interface ChangeFeed {
  /** Notes that the rows behind `topic` (and `key`, '' for all of them) changed; inside a transaction, pass it. */
  note(topic: string, key?: string, t?: Queries): Promise<void>;
  /**
   * Runs handler when another process noted a change of the topic. Ends when the module copy stops. The key '' means
   * any row of the topic may have changed: a note of '', or a reset — this process may have missed notes (on
   * PostgreSQL, its connection listening for them dropped and came back). A handler must then forget or reload
   * everything it holds for the topic.
   */
  on(topic: string, handler: (key: string) => unknown): void;
}

/** A row of a write-behind queue, numbered in the order it was pushed (flush() waits for the rows before it). */
type Queued<T> = { seq: number; row: T };
/** How a write of queued rows ended: committed (in its transaction), back in the queue, or failed and reported. */
type Outcome = 'written' | 'requeued' | 'failed';
const ignore = (): void => undefined;

/** Per store, the write-behind queues that have rows waiting for the next flush (one transaction for all of them). */
const waiting = new WeakMap<Queries, Set<WriteBehind<never>>>();

/** Per store, the write-behind transaction under way (or the last one), which the next one waits for. */
const writes = new WeakMap<Queries, Promise<void>>();

/**
 * Runs a write-behind transaction after the store's previous one has ended, so that rows commit in the order they
 * were taken. SQLite runs one transaction at a time anyway; PostgreSQL runs them side by side, where a later flush
 * could commit first: a turn's lease release before the turn's own messages, so another node took the session and
 * read its history without them.
 */
function inTurn<T>(store: Queries, write: () => Promise<T>): Promise<T> {
  const result = (writes.get(store) ?? Promise.resolve()).then(write);
  writes.set(store, result.then(ignore, ignore));
  return result;
}

function schedule(store: Queries, queue: WriteBehind<never>): void {
  let queues = waiting.get(store);
  if (!queues) {
    waiting.set(store, (queues = new Set()));
    setImmediate(() => void flushWaiting(store));
  }
  queues.add(queue);
}

/**
 * One transaction for every queue of the store that has rows. One commit instead of one per queue: fewer WAL frames
 * on SQLite, fewer round trips on PostgreSQL. When a queue's rows fail, the transaction is rolled back and each queue
 * is written again in a transaction of its own, so the failing one loses only its own rows (savepoints would do the
 * same at two more round trips per queue on every flush, not only on the rare failing one).
 */
async function flushWaiting(store: Queries): Promise<void> {
  const queues = waiting.get(store);
  waiting.delete(store);
  if (!queues) return;
  // Rows are taken when this write's turn comes, so those pushed while an earlier write ran go with it.
  await inTurn(store, async () => {
    const taken = [...queues].map((queue) => [queue, queue.take()] as const).filter(([, rows]) => rows.length);
    if (!taken.length) return;
    const written = writeTogether(store, taken);
    for (const [queue] of taken) queue.writing(written);
    await written;
  });
}

async function writeTogether(store: Queries, taken: ReadonlyArray<readonly [WriteBehind<never>, Array<Queued<never>>]>): Promise<void> {
  const outcomes = new Map<WriteBehind<never>, Outcome>();
  try {
    await store.tx(async (t) => {
      for (const [queue, rows] of taken) await queue.writeRows(rows, t);
    });
    for (const [queue] of taken) outcomes.set(queue, 'written');
  } catch (err) {
    // Another process held the database past the store's wait: nothing was written, so the rows go back, first in line.
    if (isBusy(err)) for (const [queue, rows] of taken) outcomes.set(queue, queue.requeue(rows));
    else for (const [queue, rows] of taken) outcomes.set(queue, await queue.write(rows, store));
  }
  // Only now, after the commit, are the rows readable: flush() waits for this.
  for (const [queue, rows] of taken) if (outcomes.get(queue) !== 'requeued') queue.settle(rows);
}

/** Whether a statement failed because another connection holds the lock (SQLite's SQLITE_BUSY and its variants). */
export const isBusy = (err: unknown): boolean => /^SQLITE_BUSY/.test(String((err as { code?: unknown } | undefined)?.code ?? ''));

/**
 * Takes the lock named `key` until the transaction `t` ends, so that the transactions taking it run their work one
 * after another. SQLite runs one writing transaction at a time anyway: nothing is done there. PostgreSQL runs them
 * side by side (read committed), where two could each read the same rows before either commits:
 * `pg_advisory_xact_lock(hashtext(key))`. Keys are prefixed with the module's id.
 */
export async function lockInTransaction(t: Queries, key: string): Promise<void> {
  if (t.dialect === 'postgres') await t.one('SELECT pg_advisory_xact_lock(hashtext(?))', [key]);
}

/**
 * Rows written just after the current piece of work has answered: push() queues a row, and right after the current
 * I/O callback (setImmediate, so after the HTTP answer went out) every queue of the store with rows is written in one
 * transaction. Bookkeeping (turn traces, usage rows, the messages of a turn) then costs the caller no commit, and a
 * turn's writes share one. Reads of the table must `await flush()` first, and the module flushes when it stops; a
 * failed write reaches onError with the rows it lost.
 */
export class WriteBehind<T> {
  private queued: Array<Queued<T>> = [];
  private nextSeq = 0;
  /** Rows pushed whose write has not ended (committed, or failed and reported): queued, or in a write under way. */
  private readonly unsettled = new Set<number>();
  /** Writes of rows taken from this queue (by the shared flush or flush()) that have not ended yet. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly store: Queries,
    private readonly writeRow: (t: Queries, row: T) => Promise<unknown>,
    private readonly onError: (err: unknown, rows: readonly T[]) => void,
  ) {}

  push(row: T): void {
    const seq = this.nextSeq++;
    this.unsettled.add(seq);
    this.queued.push({ seq, row });
    schedule(this.store, this as unknown as WriteBehind<never>);
  }

  /**
   * Returns once every row pushed before the call is committed (or failed and reported). It writes what is still
   * queued itself, in its own transaction, and otherwise waits for the writes that took such rows (the shared flush's
   * transaction, another flush()): on SQLite those end within the tick; on PostgreSQL each is network round trips,
   * and a shared flush may take a row while this call waits for an earlier write.
   */
  async flush(): Promise<void> {
    const before = this.nextSeq;
    const pending = () => [...this.unsettled].some((seq) => seq < before);
    while (pending()) {
      const rows = this.take();
      if (rows.length) {
        await this.writing(this.writeOwn(rows));
        continue;
      }
      // Every unsettled row is queued or in a write under way: wait for one of those to end.
      if (!this.inFlight.size) return;
      await Promise.race([...this.inFlight].map((write) => write.then(ignore, ignore)));
    }
  }

  /** Notes a write of rows taken from this queue, until it ends (flush() waits for it); returns it. */
  writing<P extends Promise<unknown>>(write: P): P {
    this.inFlight.add(write);
    const done = () => void this.inFlight.delete(write);
    write.then(done, done);
    return write;
  }

  /** The rows queued so far, handed over to be written (by flush or the shared flush). */
  take(): Array<Queued<T>> {
    const rows = this.queued;
    this.queued = [];
    return rows;
  }

  /** Writes rows in the transaction `t`; a failure is thrown. */
  async writeRows(rows: ReadonlyArray<Queued<T>>, t: Queries): Promise<void> {
    for (const { row } of rows) await this.writeRow(t, row);
  }

  /** Writes rows in a transaction of their own; a failure is reported, not thrown. */
  async write(rows: ReadonlyArray<Queued<T>>, store: Queries): Promise<Outcome> {
    try {
      await store.tx((t) => this.writeRows(rows, t));
      return 'written';
    } catch (err) {
      return isBusy(err) ? this.requeue(rows) : this.failed(err, rows);
    }
  }

  /** Rows that could not be written for now: back in front of the queue, for the next flush. */
  requeue(rows: ReadonlyArray<Queued<T>>): Outcome {
    this.queued.unshift(...rows);
    schedule(this.store, this as unknown as WriteBehind<never>);
    return 'requeued';
  }

  failed(err: unknown, rows: ReadonlyArray<Queued<T>>): Outcome {
    this.onError(
      err,
      rows.map((r) => r.row),
    );
    return 'failed';
  }

  /** The write of these rows has ended for good: committed, or failed and reported. */
  settle(rows: ReadonlyArray<Queued<T>>): void {
    for (const { seq } of rows) this.unsettled.delete(seq);
  }

  /** flush()'s own write, in its own transaction: settled when it ends (unless its rows went back to the queue). */
  private async writeOwn(rows: ReadonlyArray<Queued<T>>): Promise<void> {
    if ((await inTurn(this.store, () => this.write(rows, this.store))) !== 'requeued') this.settle(rows);
  }
}
