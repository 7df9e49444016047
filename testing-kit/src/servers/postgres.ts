/**
 * A real PostgreSQL for tests: Debian's server binaries, a data directory made by initdb in a temp folder as an
 * unprivileged user, on a free loopback port with fsync off, in the foreground and stopped by its pid. One server per
 * test process (each test file runs in its own), shared by every caller: each gets fresh databases of it. When
 * TALON_TEST_POSTGRES_URL names a server (CI starts one for the whole run), that server is used instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { waitFor } from '../wait.ts';
import { freePort, LOOPBACK, missingBinary, serverDir, serverIdentity } from './process.ts';

/** Debian's PostgreSQL 15 (what `apt-get install postgresql` brings on Debian 12). */
export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';
const USER = 'talon';

/**
 * Why a PostgreSQL test cannot run here (one line naming the package), or undefined when it can: a server named by
 * TALON_TEST_POSTGRES_URL, or the binaries to start one.
 */
export function postgresMissing(): string | undefined {
  if (process.env.TALON_TEST_POSTGRES_URL) return undefined;
  return missingBinary(path.join(POSTGRES_BIN, 'initdb'), 'postgresql');
}

export interface PostgresServer {
  /** postgres://talon@127.0.0.1:<port>/postgres (the maintenance database). */
  url: string;
  /** A fresh, empty database; its URL. */
  createDatabase(): Promise<string>;
  /** Drops a database made by createDatabase (its connections are ended first). */
  dropDatabase(url: string): Promise<void>;
  /** The postmaster's pid (undefined for a server this process did not start). */
  pid: number | undefined;
  /**
   * Done with it: the last user of this process's server stops it (by pid) and removes its data directory, unless a
   * user asked to keep it.
   */
  stop(): Promise<void>;
  /**
   * Keeps the server, and so its databases, past its last user's stop(), for a later user of this process (the next
   * kernel on a reused home). Kept, it does not hold the process: it is stopped when the process has nothing else to
   * do (or exits), unless a new user took it by then.
   */
  keep(): void;
}

interface Running {
  url: string;
  pid?: number;
  /** Whether the server (its process and output pipes) keeps this process alive: only while it has users. */
  hold(held: boolean): void;
  halt(): Promise<void>;
}

let shared: Promise<Running> | undefined;
let users = 0;
let kept = false;
let waitingForIdle = false;
let databases = 0;

/** The process has nothing left to do: a kept server nobody uses any more is stopped (which the process waits for). */
function stopKeptServer(): void {
  waitingForIdle = false;
  const running = shared;
  if (!running || users > 0) return;
  shared = undefined;
  kept = false;
  void running.then(
    (server) => server.halt(),
    () => undefined,
  );
}

/** This process's server (started on the first call); call stop() on what it returns when done with it. */
export async function startPostgres(): Promise<PostgresServer> {
  const missing = postgresMissing();
  if (missing) throw new Error(missing);
  users++;
  shared ??= boot();
  let server: Running;
  try {
    server = await shared;
  } catch (err) {
    users--;
    shared = undefined;
    throw err;
  }
  // A kept server taken again: it holds the process while it has a user.
  server.hold(true);
  let stopped = false;
  return {
    url: server.url,
    pid: server.pid,
    createDatabase: () => createDatabase(server.url),
    dropDatabase: (url) => dropDatabase(server.url, url),
    keep: () => void (kept = true),
    async stop() {
      if (stopped) return;
      stopped = true;
      if (--users > 0) return;
      if (kept) {
        server.hold(false);
        if (!waitingForIdle) process.once('beforeExit', stopKeptServer);
        waitingForIdle = true;
        return;
      }
      shared = undefined;
      await server.halt();
    },
  };
}

async function boot(): Promise<Running> {
  const external = process.env.TALON_TEST_POSTGRES_URL;
  if (external) return { url: external, hold: () => undefined, halt: async () => undefined };
  const dir = serverDir('postgres');
  const data = path.join(dir, 'data');
  const { uid, gid, root } = serverIdentity();
  const as = root ? { uid, gid } : {};
  const init = spawnSync(path.join(POSTGRES_BIN, 'initdb'), ['-D', data, '-U', USER, '-A', 'trust', '--no-locale', '-E', 'UTF8', '--no-sync'], {
    cwd: dir,
    encoding: 'utf8',
    ...as,
  });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  }
  const port = await freePort();
  return run(dir, data, port, as);
}

/** The postmaster in the foreground, stopped by its pid: SIGINT (fast shutdown: clients are disconnected), then SIGQUIT. */
async function run(dir: string, data: string, port: number, as: { uid?: number; gid?: number }): Promise<Running> {
  const settings = ['listen_addresses=' + LOOPBACK, `port=${port}`, `unix_socket_directories=${dir}`, 'fsync=off'];
  settings.push('synchronous_commit=off', 'full_page_writes=off', 'max_connections=300', 'shared_buffers=32MB');
  const child: ChildProcess = spawn(path.join(POSTGRES_BIN, 'postgres'), ['-D', data, ...settings.flatMap((s) => ['-c', s])], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...as,
  });
  let output = '';
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString('utf8')).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  // A test process that ends without stopping it (a failed before() hook) still takes its server with it.
  const onExit = () => {
    if (!gone) process.kill(child.pid!, 'SIGQUIT');
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  process.once('exit', onExit);
  const handles = [child, child.stdout, child.stderr] as unknown as ({ ref?(): void; unref?(): void } | null)[];
  const hold = (held: boolean) => {
    for (const handle of handles) {
      if (held) handle?.ref?.();
      else handle?.unref?.();
    }
  };
  const halt = async () => {
    process.removeListener('exit', onExit);
    // The process waits for the server to exit, also when it was not holding it.
    hold(true);
    if (!gone) {
      process.kill(child.pid!, 'SIGINT');
      const timer = setTimeout(() => !gone && process.kill(child.pid!, 'SIGQUIT'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `postgres://${USER}@${LOOPBACK}:${port}/postgres`;
  try {
    const died = exited.then(() => Promise.reject(new Error('postgres exited while starting')));
    await Promise.race([waitFor(() => accepts(url), 20_000, `postgres to accept connections on port ${port}`), died]);
  } catch (err) {
    await halt();
    throw new Error(`${(err as Error).message}\n${output.trim()}`);
  }
  return { url, pid: child.pid, hold, halt };
}

async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function createDatabase(serverUrl: string): Promise<string> {
  const name = `talon_test_${process.pid}_${++databases}_${Date.now().toString(36)}`;
  await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(serverUrl: string, url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/^talon_test_[a-z0-9_]+$/.test(name)) throw new Error(`not a test database: ${name}`);
  await admin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
