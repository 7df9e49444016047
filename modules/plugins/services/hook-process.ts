/**
 * Starting a hook process and running a one-shot call. Hooks are spawned directly from their argv (isolation
 * prefix, launcher, script), never through a shell: nothing to quote and one program start fewer per call. Each
 * leads its own process group, which is killed when the call ends, so background children never outlive it (in a
 * PID namespace the kernel also kills whatever left the group).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Launch } from './launch.ts';

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The cleared environment: the passthrough names, HOME and PWD = the private folder, then the launch's variables. */
export function hookEnv(l: Launch, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of l.passthrough) if (parent[name] !== undefined) env[name] = parent[name]!;
  env.PATH ??= DEFAULT_PATH;
  return { ...env, HOME: l.dir, PWD: l.dir, ...l.env };
}

export function spawnHook(l: Launch): ChildProcess {
  return spawn(l.argv[0], l.argv.slice(1), { cwd: l.dir, env: hookEnv(l), detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
}

export function killTree(child: ChildProcess): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

export interface OneShotOutcome {
  stdout: string;
  /** The last 4 KiB of stderr (for the error message). */
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  overflowed: boolean;
}

const STDERR_TAIL = 4096;

/**
 * A started one-shot hook process. It may be started ahead of its call (a spare, see ProcessPool): its output is
 * collected from the start, and the time limit runs from the moment the request is written.
 */
export class OneShot {
  readonly child: ChildProcess;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private stderr = '';
  private exitCode: number | null = null;
  private spawnError = '';
  private timedOut = false;
  private overflowed = false;
  private closed = false;
  private onClose?: () => void;

  constructor(
    readonly launch: Launch,
    private readonly maxBytes: number,
  ) {
    this.child = spawnHook(launch);
    this.child.stdin!.on('error', () => undefined); // a hook that exits without reading must not crash the service (EPIPE)
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.size += chunk.length;
      if (this.size > this.maxBytes) {
        this.overflowed = true;
        killTree(this.child);
        return;
      }
      this.chunks.push(chunk);
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)));
    this.child.on('error', (err) => (this.spawnError = `could not start: ${err.message}`));
    this.child.on('exit', (code) => {
      this.exitCode = code;
      killTree(this.child); // background children would keep the pipes open (and run on)
    });
    this.child.on('close', () => {
      this.closed = true;
      this.onClose?.();
    });
  }

  /** Still waiting for its request (a spare that died or flooded before its call is not worth keeping). */
  get waiting(): boolean {
    return !this.closed && !this.overflowed;
  }

  /** Writes the request (stdin is then closed) and resolves when the process is gone. */
  finish(stdin: string, timeoutMs: number): Promise<OneShotOutcome> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timedOut = true;
        killTree(this.child);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve({
          stdout: Buffer.concat(this.chunks).toString('utf8'),
          stderr: this.spawnError || this.stderr,
          exitCode: this.spawnError ? -1 : this.exitCode,
          timedOut: this.timedOut,
          overflowed: this.overflowed,
        });
      };
      if (this.closed) return done();
      this.onClose = done;
      this.child.stdin!.end(stdin);
    });
  }

  kill(): void {
    killTree(this.child);
  }
}
