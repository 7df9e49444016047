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

/** Runs one call: the request on stdin (then closed), stdout kept up to maxBytes (the tree is killed past it). */
export function runOnce(l: Launch, stdin: string, timeoutMs: number, maxBytes: number): Promise<OneShotOutcome> {
  return new Promise((resolve) => {
    const child = spawnHook(l);
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    const flags = { timedOut: false, overflowed: false, spawnError: '' };
    child.stdin!.on('error', () => undefined); // a hook that exits without reading must not crash the service (EPIPE)
    child.stdin!.end(stdin);
    child.stdout!.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        flags.overflowed = true;
        killTree(child);
        return;
      }
      chunks.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)));
    const timer = setTimeout(() => {
      flags.timedOut = true;
      killTree(child);
    }, timeoutMs);
    let exitCode: number | null = null;
    child.on('error', (err) => (flags.spawnError = `could not start: ${err.message}`));
    child.on('exit', (code) => {
      exitCode = code;
      killTree(child); // background children would keep the pipes open (and run on)
    });
    child.on('close', () => {
      clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(chunks).toString('utf8'),
        stderr: flags.spawnError || stderr,
        exitCode: flags.spawnError ? -1 : exitCode,
        timedOut: flags.timedOut,
        overflowed: flags.overflowed,
      });
    });
  });
}
