/**
 * A long-lived program in the subprocess sandbox (channel sidecars): the same cleared environment, PID namespace or
 * process group and /proc sweep as a run of sandbox.ts, but with its standard streams left open to the caller and no
 * timeout. `signal` reaches the whole group (a polite SIGTERM first); `kill` ends everything the program started.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { SandboxProcess, SandboxStart } from '@talon/tools';
import { isolate, type Isolation } from './isolation.ts';
import { killMarked, RUN_MARKER } from './proc-tree.ts';
import { sandboxEnv } from './sandbox.ts';

export function startSandboxed(options: SandboxStart, isolation: Isolation, parentEnv: NodeJS.ProcessEnv = process.env): SandboxProcess {
  // Without a PID namespace, descendants that left the group are found again by this marker (proc-tree.ts).
  const runId = isolation.method === 'none' ? randomUUID() : undefined;
  const env = { ...sandboxEnv(options.envPassthrough, options.cwd, parentEnv), ...options.env, ...(runId ? { [RUN_MARKER]: runId } : {}) };
  const { file, args } = isolate(isolation, options.argv, options.network !== false);
  // Own process group, so the program and its children can be signalled and killed together.
  const child = spawn(file, args, { cwd: options.cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  // A program that exits while we write must not crash the service with EPIPE.
  child.stdin.on('error', () => undefined);
  const group = (sig: NodeJS.Signals) => {
    if (!child.pid) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // ESRCH: the group is already gone
    }
  };
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: string }>((resolve) => {
    child.once('error', (err) => resolve({ code: null, signal: null, error: err.message }));
    child.once('exit', (code, signal) => {
      // Background children would live on: they end with the program.
      group('SIGKILL');
      resolve({ code, signal });
    });
  });
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    exited,
    signal: group,
    async kill() {
      group('SIGKILL');
      if (runId) await killMarked(runId).catch(() => 0);
      await exited;
    },
  };
}
