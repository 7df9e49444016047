/**
 * Runs a command line under /bin/sh in its own process group with a cleared
 * environment, the workspace as cwd and HOME, a timeout and an output cap.
 * On timeout or abort the whole group (the shell and everything it started)
 * gets SIGKILL; the group is also killed after a normal exit so background
 * children never outlive the call.
 */
import { spawn } from 'node:child_process';

export interface SandboxOptions {
  command: string;
  cwd: string;
  /** Names copied from the service's environment; everything else is dropped. */
  envPassthrough: readonly string[];
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Inherited environment to copy from (tests pass their own). */
  parentEnv?: NodeJS.ProcessEnv;
  /** Extra variables set as given. */
  env?: Readonly<Record<string, string>>;
  /** Written to standard input, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Kill the group as soon as stdout passes maxOutputBytes. */
  killOnOverflow?: boolean;
}

export interface SandboxResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  pid?: number;
}

export function sandboxEnv(passthrough: readonly string[], workspace: string, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of passthrough) {
    const value = parent[name];
    if (value !== undefined && name !== 'HOME') env[name] = value;
  }
  if (!env.PATH) env.PATH = '/usr/local/bin:/usr/bin:/bin';
  env.HOME = workspace;
  env.PWD = workspace;
  return env;
}

class Capped {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    const room = this.max - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    this.chunks.push(part);
    this.size += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone
  }
}

export function runSandboxed(options: SandboxOptions): Promise<SandboxResult> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      resolve({ exitCode: null, signal: null, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, timedOut: false, aborted: true });
      return;
    }
    const child = spawn('/bin/sh', ['-c', options.command], {
      cwd: options.cwd,
      env: { ...sandboxEnv(options.envPassthrough, options.cwd, options.parentEnv), ...options.env },
      detached: true, // own process group, so the whole tree can be killed
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.stdin !== undefined && child.stdin) {
      // A program that exits without reading its input must not crash the service with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.stdin);
    }
    const out = new Capped(options.maxOutputBytes);
    const err = new Capped(options.maxOutputBytes);
    child.stdout?.on('data', (c: Buffer) => {
      out.push(c);
      if (out.truncated && options.killOnOverflow) killGroup(child.pid);
    });
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    let timedOut = false;
    let aborted = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup(child.pid);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on('error', (e) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Background children would keep the pipes open (and run on): end them with the shell.
      killGroup(child.pid);
    });
    child.on('close', () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: out.text(),
        stderr: err.text(),
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
        timedOut,
        aborted,
        pid: child.pid,
      });
    });
  });
}
