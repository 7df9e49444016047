import { createHash } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import pg from 'pg';
import type { Params, Queries, SqlValue, Store } from '@talon/module-sdk';
import { Mutex } from './mutex.ts';
import { PgListener, type PgListenerOptions } from './pg-listener.ts';
import { numberPlaceholders } from './postgres-sql.ts';

/** The oldest server the store runs on: Debian 12's (MERGE, NULLS NOT DISTINCT, the fleet's needs, came with it). */
const MIN_SERVER_VERSION = 150000;
/** Statements prepared per connection are named by their text; SQL built at run time would otherwise grow the cache. */
const STATEMENT_CACHE = 1000;
/** Connections are replaced after this long, which also bounds the statements each has prepared on the server. */
const CONNECTION_LIFETIME_S = 3600;
/** Serialization failure and deadlock: the transaction lost a race, and the same work again normally succeeds. */
const RETRY_CODES = new Set(['40001', '40P01']);

export interface PostgresStoreOptions {
  /** postgres://user[:password]@host[:port]/database[?…] (a missing password comes from PGPASSWORD or ~/.pgpass). */
  url: string;
  /** A statement running longer is cancelled after this many ms (an idle transaction after twice it); default 30 s. */
  statementTimeoutMs?: number;
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /** An idle connection's error (the server restarted, the network dropped): the pool replaces the connection. */
  onError?: (err: Error) => void;
}

/**
 * The store on PostgreSQL through a `pg` pool. Integers come back as numbers (BIGINT and NUMERIC too; a value past
 * 2^53 is refused rather than rounded); `?` placeholders are numbered; each statement is a named prepared statement
 * (its name a hash of its text). A transaction holds one connection: BEGIN … COMMIT, savepoints when nested, and the
 * whole work run once more when it lost to a concurrent one (serialization failure or deadlock). Statements outside a
 * transaction each take any free connection, so one issued while a transaction is open runs beside it, never in it.
 */
export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly statementTimeoutMs: number;
  private readonly pool: pg.Pool;
  private readonly statements = new Map<string, { name: string; text: string }>();
  /** Transactions open now: a statement that times out meanwhile may be one waiting for such a transaction's locks. */
  private openTransactions = 0;
  /** Kept for the listener's connection, which is not one of the pool's (see listen). */
  private readonly url: string;

  constructor(options: PostgresStoreOptions) {
    this.url = options.url;
    this.statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      statement_timeout: this.statementTimeoutMs,
      // Twice as long: a transaction waiting for one of its statements' results (at most the statement timeout) is
      // idle meanwhile; only one that awaits something else for longer is ended.
      idle_in_transaction_session_timeout: 2 * this.statementTimeoutMs,
      connectionTimeoutMillis: this.statementTimeoutMs,
      maxLifetimeSeconds: CONNECTION_LIFETIME_S,
      application_name: 'talon',
      types: { getTypeParser },
    });
    // Without a listener an idle connection's error would end the process.
    this.pool.on('error', (err) => options.onError?.(err));
  }

  sqlite(): Database {
    throw new Error(
      'store.sqlite(): the service runs on PostgreSQL; the raw better-sqlite3 connection exists only on SQLite ' +
        '(code that needs it runs on SQLite only)',
    );
  }

  pick<T>(choices: { sqlite: T; postgres: T }): T {
    return choices.postgres;
  }

  /** Connects once and checks the server's version: start-up fails here, naming why, not at a module's first use. */
  async check(): Promise<void> {
    const row = await this.one<{ server_version_num: string }>('SHOW server_version_num');
    const version = Number(row?.server_version_num);
    if (version < MIN_SERVER_VERSION)
      throw new Error(`PostgreSQL ${Math.floor(version / 10000)} is too old: the store needs PostgreSQL 15 or later`);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** LISTEN on a connection of its own to the same database (a pooled one would lose its LISTEN when released). */
  listen(options: Omit<PgListenerOptions, 'url'>): PgListener {
    return new PgListener({ ...options, url: this.url });
  }

  async one<R>(sql: string, params?: Params): Promise<R | undefined> {
    return (await this.outside(sql, params)).rows[0] as R | undefined;
  }

  async many<R>(sql: string, params?: Params): Promise<R[]> {
    return (await this.outside(sql, params)).rows as R[];
  }

  async run(sql: string, params?: Params): Promise<{ changes: number }> {
    return { changes: (await this.outside(sql, params)).rowCount ?? 0 };
  }

  /** A script: the simple query protocol, so several statements, no parameters. */
  async exec(script: string): Promise<void> {
    await this.pool.query(script).catch((err: unknown) => Promise.reject(this.explain(err)));
  }

  async tx<T>(work: (t: Queries) => Promise<T>): Promise<T> {
    try {
      return await this.attempt(work);
    } catch (err) {
      if (!RETRY_CODES.has(sqlState(err)) && !isStalePlan(err)) throw err;
      return this.attempt(work);
    }
  }

  /** One run of a transaction's work on a connection of its own. */
  private async attempt<T>(work: (t: Queries) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const handle = new PgTxHandle(this, client);
    let broken: Error | undefined;
    this.openTransactions++;
    try {
      await client.query('BEGIN');
      const result = await work(handle);
      handle.check();
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // A connection that cannot roll back, or holds a statement prepared for a table that changed, is not reused.
      broken = await client.query('ROLLBACK').then(
        () => (isStalePlan(err) ? (err as Error) : undefined),
        (failed: Error) => failed,
      );
      throw err;
    } finally {
      handle.end();
      this.openTransactions--;
      client.release(broken);
    }
  }

  /** A statement outside any transaction, on any free connection. */
  private async outside(sql: string, params: Params | undefined): Promise<pg.QueryResult> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.pool.connect();
      try {
        const result = await client.query(this.prepared(sql, params));
        client.release();
        return result;
      } catch (err) {
        // A statement prepared before a migration changed its table's columns fails once per connection: that
        // connection is dropped (with its prepared statements) and the statement runs again on another.
        const stale = isStalePlan(err);
        client.release(stale || !sqlState(err) ? (err as Error) : undefined);
        if (!stale || attempt) throw this.explain(err);
      }
    }
  }

  /** A statement inside a transaction, on its connection. */
  async inside(client: pg.PoolClient, sql: string, params: Params | undefined): Promise<pg.QueryResult> {
    return client.query(this.prepared(sql, params)).catch((err: unknown) => Promise.reject(this.explain(err)));
  }

  private prepared(sql: string, params: Params | undefined): pg.QueryConfig {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENT_CACHE) this.statements.delete(this.statements.keys().next().value!);
      const text = numberPlaceholders(sql);
      statement = { name: `talon_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text };
      this.statements.set(sql, statement);
    }
    return { ...statement, values: params ? params.map(withoutNul) : [] };
  }

  /** A statement timeout says which setting bounds it, and the likely cause when a transaction was open. */
  private explain(err: unknown): unknown {
    if (sqlState(err) !== '57014' || !/statement timeout/.test((err as Error).message)) return err;
    const hint = this.openTransactions
      ? '; a transaction of this process was open: a statement on the store inside a transaction waits for that ' +
        "transaction's locks (use its handle `t`)"
      : '';
    (err as Error).message += ` (after ${this.statementTimeoutMs} ms, [database] statement_timeout_ms${hint})`;
    return err;
  }
}

/** A transaction's `t`: its connection; savepoints for nested transactions; unusable once the transaction ended. */
class PgTxHandle implements Queries {
  readonly dialect = 'postgres' as const;
  private ended = false;
  private savepoints = 0;
  private readonly nesting = new Mutex();

  constructor(
    private readonly store: PostgresStore,
    private readonly client: pg.PoolClient,
    private readonly depth = 0,
  ) {}

  pick<T>(choices: { sqlite: T; postgres: T }): T {
    return choices.postgres;
  }

  async one<R>(sql: string, params?: Params): Promise<R | undefined> {
    this.check();
    return (await this.store.inside(this.client, sql, params)).rows[0] as R | undefined;
  }

  async many<R>(sql: string, params?: Params): Promise<R[]> {
    this.check();
    return (await this.store.inside(this.client, sql, params)).rows as R[];
  }

  async run(sql: string, params?: Params): Promise<{ changes: number }> {
    this.check();
    return { changes: (await this.store.inside(this.client, sql, params)).rowCount ?? 0 };
  }

  async exec(script: string): Promise<void> {
    this.check();
    await this.client.query(script);
  }

  /** A savepoint; those of one handle run one after another (two open at once would release each other). */
  async tx<T>(work: (t: Queries) => Promise<T>): Promise<T> {
    this.check();
    const release = await this.nesting.lock();
    const name = `talon_sp${this.depth}_${++this.savepoints}`;
    const inner = new PgTxHandle(this.store, this.client, this.depth + 1);
    try {
      await this.client.query(`SAVEPOINT ${name}`);
      const result = await work(inner);
      inner.check();
      await this.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await this.client.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`).catch(() => undefined);
      throw err;
    } finally {
      inner.end();
      release();
    }
  }

  check(): void {
    if (this.ended) throw new Error('this transaction has ended: its handle was used after its work resolved');
  }

  end(): void {
    this.ended = true;
  }
}

const INT8 = 20;
const INT8_ARRAY = 1016;
const NUMERIC = 1700;
const NUMERIC_ARRAY = 1231;

/** pg's parsers, with integers and numerics as numbers; a value a number cannot hold exactly is an error. */
function getTypeParser(oid: number, format?: string): (text: string) => unknown {
  if (format === 'binary') return pg.types.getTypeParser(oid as never, 'binary') as (text: string) => unknown;
  if (oid === INT8 || oid === NUMERIC) return toNumber;
  if (oid === INT8_ARRAY || oid === NUMERIC_ARRAY) {
    const parseArray = pg.types.getTypeParser(INT8_ARRAY as never) as (text: string) => Array<string | null>;
    return (text) => parseArray(text).map((v) => (v === null ? null : toNumber(v)));
  }
  return pg.types.getTypeParser(oid as never);
}

/**
 * PostgreSQL's text cannot hold U+0000 (the server refuses the whole statement): a NUL in a string value, which a
 * caller may pass, is stored as U+FFFD, the replacement character, rather than lose the row.
 */
function withoutNul(value: SqlValue): SqlValue {
  return typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

/** BIGINT, NUMERIC (COUNT, SUM): as a number, or an error when past 2^53, where numbers stop being exact. */
export function toNumber(text: string): number {
  const n = Number(text);
  if (Math.abs(n) > Number.MAX_SAFE_INTEGER || Number.isNaN(n))
    throw new RangeError(
      `PostgreSQL returned ${text}, past 2^53: the store reads integers as JavaScript numbers, which cannot hold ` +
        'it exactly (store such a value as TEXT)',
    );
  return n;
}

const sqlState = (err: unknown): string => String((err as { code?: unknown } | undefined)?.code ?? '');

/** A prepared statement whose table's columns changed since it was prepared (a migration ran meanwhile). */
const isStalePlan = (err: unknown): boolean =>
  sqlState(err) === '0A000' && /cached plan must not change result type/.test((err as Error).message);
