/**
 * What the real-server harnesses share: a free loopback port, a temp folder the server may write, an unprivileged
 * identity to run it under, a bounded wait until it accepts connections, and a stop by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../wait.ts';

export const LOOPBACK = '127.0.0.1';

/** The one-line skip reason when a Debian server binary is absent, so a test says what to install instead of passing. */
export function missingBinary(binary: string, debianPackage: string): string | undefined {
  try {
    accessSync(binary, constants.X_OK);
    return undefined;
  } catch {
    return `${binary} is not installed: apt-get install -y ${debianPackage}`;
  }
}

/** A port the kernel just handed out on 127.0.0.1; the server binds it right after (servers take no "port 0"). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, LOOPBACK, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The identity the server runs under: the test's own when it is not root; `nobody` when it is (CI runs as root, and
 * neither server should run privileged: dovecot refuses root for its login processes, ngircd would drop to it anyway).
 */
export function serverIdentity(): { uid: number; gid: number; root: boolean } {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? uid, root: false };
  return { uid: 65534, gid: 65534, root: true };
}

/** A temp folder owned by the server's identity (so it can write its state, pid and mail there). */
export function serverDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `talon-${prefix}-`));
  const { uid, gid, root } = serverIdentity();
  if (root) chownSync(dir, uid, gid);
  return dir;
}

export interface RunningServer {
  pid: number;
  /** SIGTERM, then SIGKILL if it has not exited within 5 s; then the temp folder is removed. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Spawns the server in the foreground (its own pid, no daemon fork) under serverIdentity() and waits until `port`
 * accepts a connection.
 */
export async function runServer(opts: { name: string; command: string; args: string[]; port: number; dir: string }): Promise<RunningServer> {
  const { uid, gid, root } = serverIdentity();
  const child: ChildProcess = spawn(opts.command, opts.args, {
    cwd: opts.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(root ? { uid, gid } : {}),
  });
  // Kept for the error message only: a server that fails to start says why in its own words.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (!exited && child.pid) {
      process.kill(child.pid, 'SIGTERM');
      const killed = await Promise.race([exit.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref())]);
      if (!killed && !exited) {
        process.kill(child.pid, 'SIGKILL');
        await exit;
      }
    }
    rmSync(opts.dir, { recursive: true, force: true });
  };
  try {
    // A server that exits while starting fails at once with its own words, not after the wait's timeout.
    const died = exit.then(() => {
      throw new Error(`${opts.name} exited while starting`);
    });
    await Promise.race([waitFor(() => canConnect(opts.port), 10_000, `${opts.name} to listen on ${LOOPBACK}:${opts.port}`), died]);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output.trim()}`);
  }
  return { pid: child.pid as number, stop };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, LOOPBACK);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
