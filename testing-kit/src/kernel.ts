import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kernel, type KernelOptions } from '../../kernel/kernel.ts';
import { startPostgres, type PostgresServer } from './servers/postgres.ts';

export interface TestKernel {
  kernel: Kernel;
  /** Every log line (JSON text) written since the kernel started. */
  logLines(): string[];
  url: string;
  home: string;
  /** The PostgreSQL database the kernel runs on; undefined on SQLite. */
  databaseUrl?: string;
  /** fetch() against the kernel, with the path relative to its URL. */
  request(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

export interface TestKernelOptions extends Pick<KernelOptions, 'only' | 'dev' | 'modulesDir' | 'settleMs' | 'heartbeatMs' | 'feedPollMs' | 'dataDir'> {
  /** config.toml contents (api_listen and log_level are added unless given); null: no file, a first start. */
  config?: string | null;
  /** Reuse a home (to test persistence across restarts). */
  home?: string;
  keepHome?: boolean;
  /**
   * The engine: 'sqlite' (the home's file) or 'postgres' (a database of this process's PostgreSQL server, one per home:
   * a kernel on a reused home runs on the same one; dropped with the home). Default: TALON_TEST_DB, else 'sqlite'.
   */
  database?: 'sqlite' | 'postgres';
  /**
   * Run on this PostgreSQL database (two kernels on one database: give them one home, or one `dataDir`, else the
   * second refuses to start); it is left as it is at stop.
   */
  databaseUrl?: string;
}

interface HomeDatabase {
  /** The server it lives on (`url#pid`): a database of a server that has stopped is gone with it. */
  server: string;
  url: Promise<string>;
  /** Kernels running on it now. */
  kernels: number;
  /** Its home was removed: the database is dropped once no kernel runs on it. */
  removed: boolean;
}

/**
 * The database of each home a kernel ran on: the next kernel on that home (a restart test, a second "process" on the
 * same home) runs on the same database. The promise is recorded before it is made, so kernels started together share it.
 */
const homeDatabases = new Map<string, HomeDatabase>();

interface TestDatabase {
  url?: string;
  /** The kernel stopped (and its home was removed, or not): what it took is given back. */
  release(homeRemoved: boolean): Promise<void>;
}

/**
 * The database of the kernel's home when the test asks for PostgreSQL: made for the first kernel on the home, shared
 * by the next ones. A home the test keeps (given, or keepHome) keeps its database, and so the server (without holding
 * the test process: see PostgresServer.keep); a home removed at stop takes its database with it.
 */
async function testDatabase(options: TestKernelOptions, home: string): Promise<TestDatabase> {
  if (options.databaseUrl) return { url: options.databaseUrl, release: async () => undefined };
  const engine = options.database ?? process.env.TALON_TEST_DB ?? 'sqlite';
  if (engine === 'sqlite') return { release: async () => undefined };
  if (engine !== 'postgres') throw new Error(`TALON_TEST_DB is '${engine}': it is 'sqlite' or 'postgres'`);
  const server: PostgresServer = await startPostgres();
  if (options.home || options.keepHome) server.keep();
  const id = `${server.url}#${server.pid ?? ''}`;
  let entry = homeDatabases.get(home);
  if (!entry || entry.server !== id || entry.removed) {
    const made: HomeDatabase = { server: id, url: homeDatabaseUrl(server, home), kernels: 0, removed: false };
    homeDatabases.set(home, (entry = made));
    made.url.catch(() => homeDatabases.get(home) === made && homeDatabases.delete(home));
  }
  const database = entry;
  database.kernels++;
  let url: string;
  try {
    url = await database.url;
  } catch (err) {
    database.kernels--;
    await server.stop();
    throw err;
  }
  let released = false;
  return {
    url,
    async release(homeRemoved) {
      if (released) return;
      released = true;
      if (homeRemoved) database.removed = true;
      if (--database.kernels === 0 && database.removed) {
        if (homeDatabases.get(home) === database) homeDatabases.delete(home);
        await server.dropDatabase(url).catch(() => undefined);
      }
      await server.stop();
    },
  };
}

/** Where a home records its database on a server other processes share (see homeDatabaseUrl). */
const DATABASE_NOTE = '.talon-test-database';

/**
 * The home's database: made now, or, on a server that outlives this process (TALON_TEST_POSTGRES_URL, as in CI), the
 * one another process (a child the test killed, a service it restarted) recorded in the home, so processes on one
 * home share a database as they share its SQLite file. A server this process started stops with it: nothing to share.
 */
async function homeDatabaseUrl(server: PostgresServer, home: string): Promise<string> {
  const note = path.join(home, DATABASE_NOTE);
  const shared = server.pid === undefined;
  if (shared && existsSync(note)) return readFileSync(note, 'utf8').trim();
  const url = await server.createDatabase();
  if (shared) writeFileSync(note, url);
  return url;
}

/**
 * Boots a kernel in-process on a free loopback port in a temporary home, with
 * a chosen set of modules. Call stop() in an after() hook.
 */
export async function startTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  const home = options.home ?? mkdtempSync(path.join(tmpdir(), 'talon-test-'));
  const file = path.join(home, 'config.toml');
  // A reused home keeps its config.toml (restart tests) unless a new one is given.
  if (options.config !== null && (options.config !== undefined || !existsSync(file))) {
    let config = options.config ?? '';
    if (!/^\s*api_listen\s*=/m.test(config)) config = `api_listen = "127.0.0.1:0"\n${config}`;
    if (!/^\s*log_level\s*=/m.test(config)) config = `log_level = "${process.env.TALON_TEST_LOG ?? 'silent'}"\n${config}`;
    writeFileSync(file, config);
  }
  const { only, dev, modulesDir, settleMs, heartbeatMs, feedPollMs, dataDir } = options;
  const listen = options.config === null ? '127.0.0.1:0' : undefined;
  // A home the kit made is removed at stop unless the test keeps it.
  const removeHome = !options.keepHome && !options.home;
  const database = await testDatabase(options, home);
  const stdout = Boolean(process.env.TALON_TEST_LOG);
  const kernel = new Kernel({ home, only, dev, modulesDir, listen, settleMs, heartbeatMs, feedPollMs, stdout, dataDir, databaseUrl: database.url });
  try {
    await kernel.start();
  } catch (err) {
    await kernel.stop().catch(() => undefined);
    await database.release(removeHome);
    if (removeHome) rmSync(home, { recursive: true, force: true });
    throw err;
  }
  const url = `http://127.0.0.1:${kernel.port}`;
  const lines: string[] = [];
  kernel.hooks.kernel.log.line.tap('test-kernel', (line) => void lines.push(line));
  lines.unshift(...kernel.earlyLogLines());
  return {
    kernel,
    logLines: () => lines,
    url,
    home,
    databaseUrl: database.url,
    request(pathname, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      return fetch(url + pathname, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
    async stop() {
      await kernel.stop('test');
      await database.release(removeHome);
      if (removeHome) rmSync(home, { recursive: true, force: true });
    },
  };
}
