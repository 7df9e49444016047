/**
 * How a hook process starts: directly from its argv (isolation prefix, launcher, script), never through a shell
 * (nothing to quote, one program start fewer per call), with a cleared environment, leading its own process group,
 * which is killed when the call ends, so background children never outlive it (in a PID namespace the kernel also
 * kills whatever left the group). Persistent processes are spawned here; one-shot ones by the launcher (launcher.ts).
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

/** Kills the process group a hook process leads (its whole tree, unless something left the group). */
export function killGroup(pid: number | null | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
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
