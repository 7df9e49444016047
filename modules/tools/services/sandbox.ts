/**
 * Runs a command line under /bin/sh with a cleared environment, the workspace as cwd and HOME, a timeout and an
 * output cap. Where the machine allows it the shell runs in its own PID namespace (isolation.ts): when the shell
 * exits or is killed, every process it started dies with it, setsid or not, and a run that may not use the network
 * also gets an empty network namespace. Elsewhere the shell leads its own process group, which is killed at the
 * end, on timeout and on abort, and /proc is walked for descendants that left the group (proc-tree.ts).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { isolate, probeIsolation, type Isolation } from './isolation.ts';
import { killMarked, RUN_MARKER } from './proc-tree.ts';

export interface SandboxOptions {
  command: string;
  cwd: string;
  /** Names copied from the service's environment; everything else is dropped. */
  envPassthrough: readonly string[];
  timeoutMs: number;
  /** Kill the run when it printed nothing for this long (0 or absent: no such limit). */
  idleTimeoutMs?: number;
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
  /** False: no network (enforced where namespaces are available). Default true. */
  network?: boolean;
}

export interface SandboxResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  /** The run was killed because it printed nothing for idleTimeoutMs. */
  idleTimedOut: boolean;
  aborted: boolean;
  pid?: number;
}

/** One sandbox per module copy: the isolation probe runs once per setting. */
export interface Sandbox {
  run(options: SandboxOptions): Promise<SandboxResult>;
  isolation(): Promise<Isolation>;
}

export function createSandbox(mode: () => 'auto' | 'off'): Sandbox {
  const probes = new Map<string, Promise<Isolation>>();
  const isolation = () => {
    const m = mode();
    let probe = probes.get(m);
    if (!probe) probes.set(m, (probe = probeIsolation(m)));
    return probe;
  };
  return { isolation, run: async (options) => runSandboxed(options, await isolation()) };
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

const ABORTED: SandboxResult = {
  exitCode: null,
  signal: null,
  stdout: '',
  stderr: '',
  stdoutTruncated: false,
  stderrTruncated: false,
  timedOut: false,
  idleTimedOut: false,
  aborted: true,
};

export function runSandboxed(options: SandboxOptions, isolation: Isolation): Promise<SandboxResult> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return resolve({ ...ABORTED });
    // Without a PID namespace, descendants are found again by this marker (proc-tree.ts).
    const runId = isolation.method === 'none' ? randomUUID() : undefined;
    const env = { ...sandboxEnv(options.envPassthrough, options.cwd, options.parentEnv), ...options.env, ...(runId ? { [RUN_MARKER]: runId } : {}) };
    const { file, args } = isolate(isolation, ['/bin/sh', '-c', options.command], options.network !== false);
    const child = spawn(file, args, {
      cwd: options.cwd,
      env,
      detached: true, // own process group, so the whole tree can be killed
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    // The /proc sweep of the last kill; the result waits for it, so nothing of the run is left when it resolves.
    let sweep: Promise<unknown> = Promise.resolve();
    const killTree = () => {
      killGroup(child.pid);
      if (runId) sweep = killMarked(runId).catch(() => 0);
    };
    if (options.stdin !== undefined && child.stdin) {
      // A program that exits without reading its input must not crash the service with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.stdin);
    }
    const out = new Capped(options.maxOutputBytes);
    const err = new Capped(options.maxOutputBytes);
    const flags = { timedOut: false, idleTimedOut: false, aborted: false };
    let idleTimer: NodeJS.Timeout | undefined;
    const idle = () => {
      if (!options.idleTimeoutMs) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        flags.idleTimedOut = true;
        killTree();
      }, options.idleTimeoutMs);
    };
    idle();
    child.stdout?.on('data', (c: Buffer) => {
      idle();
      out.push(c);
      if (out.truncated && options.killOnOverflow) killTree();
    });
    child.stderr?.on('data', (c: Buffer) => {
      idle();
      err.push(c);
    });
    const timer = setTimeout(() => {
      flags.timedOut = true;
      killTree();
    }, options.timeoutMs);
    const onAbort = () => {
      flags.aborted = true;
      killTree();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      clearTimeout(idleTimer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on('error', (e) => {
      settle();
      reject(e);
    });
    // Background children would keep the pipes open (and run on): end them with the shell.
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      killTree();
    });
    child.on('close', async () => {
      settle();
      await sweep;
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: out.text(),
        stderr: err.text(),
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
        ...flags,
        pid: child.pid,
      });
    });
  });
}
