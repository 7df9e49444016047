import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

export interface TestKernelOptions extends Pick<KernelOptions, 'only' | 'dev' | 'modulesDir' | 'settleMs' | 'heartbeatMs' | 'feedPollMs'> {
  /** config.toml contents (api_listen and log_level are added unless given); null: no file, a first start. */
  config?: string | null;
  /** Reuse a home (to test persistence across restarts). */
  home?: string;
  keepHome?: boolean;
  /**
   * The engine: 'sqlite' (the home's file) or 'postgres' (a fresh database of this process's PostgreSQL server, dropped
   * at stop). Default: TALON_TEST_DB, else 'sqlite'.
   */
  database?: 'sqlite' | 'postgres';
  /** Run on this PostgreSQL database (two kernels on one database); it is left as it is at stop. */
  databaseUrl?: string;
}

/** The database of each reused home (a restart test starts a kernel on the same home again: same database). */
const homeDatabases = new Map<string, string>();

/**
 * A fresh database for a kernel, when the test asks for PostgreSQL; dropped with the kernel, unless the test reuses its
 * home (then it lives as long as the server, for the next kernel on that home).
 */
async function testDatabase(options: TestKernelOptions, home: string): Promise<{ url?: string; release(): Promise<void> }> {
  if (options.databaseUrl) return { url: options.databaseUrl, release: async () => undefined };
  const engine = options.database ?? process.env.TALON_TEST_DB ?? 'sqlite';
  if (engine === 'sqlite') return { release: async () => undefined };
  if (engine !== 'postgres') throw new Error(`TALON_TEST_DB is '${engine}': it is 'sqlite' or 'postgres'`);
  const server: PostgresServer = await startPostgres();
  const kept = options.home ? homeDatabases.get(home) : undefined;
  const url = kept ?? (await server.createDatabase());
  if (options.home) homeDatabases.set(home, url);
  return {
    url,
    async release() {
      // A reused home's database outlives its kernel, so the server does too (until the test process exits).
      if (options.home) return;
      await server.dropDatabase(url).catch(() => undefined);
      await server.stop();
    },
  };
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
  const { only, dev, modulesDir, settleMs, heartbeatMs, feedPollMs } = options;
  const listen = options.config === null ? '127.0.0.1:0' : undefined;
  const database = await testDatabase(options, home);
  const stdout = Boolean(process.env.TALON_TEST_LOG);
  const kernel = new Kernel({ home, only, dev, modulesDir, listen, settleMs, heartbeatMs, feedPollMs, stdout, databaseUrl: database.url });
  try {
    await kernel.start();
  } catch (err) {
    await kernel.stop().catch(() => undefined);
    await database.release();
    if (!options.keepHome && !options.home) rmSync(home, { recursive: true, force: true });
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
      await database.release();
      if (!options.keepHome && !options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}
