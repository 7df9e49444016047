/**
 * What this machine lets the sandbox enforce, probed once per module copy: `unshare` into a new PID namespace (and a
 * network namespace when a run may not use the network), as root directly, otherwise inside a new user namespace.
 * In a PID namespace the shell is process 1: when it ends, or is killed, the kernel kills every process left in the
 * namespace, including those that called setsid. In a new network namespace only a loopback interface exists, and
 * it is down: no connection leaves the process.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export interface Isolation {
  /** 'unshare' (root), 'unshare-user' (inside a user namespace), or 'none' (process group plus /proc walk). */
  method: 'unshare' | 'unshare-user' | 'none';
  /** Path of the unshare program when method is not 'none'. */
  program?: string;
  /** Why this method (for the log and GET /api/tools diagnostics). */
  reason: string;
}

const none = (reason: string): Isolation => ({ method: 'none', reason });

function findProgram(name: string, searchPath: string): string | undefined {
  for (const dir of [...searchPath.split(':'), '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function runs(program: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => execFile(program, args, { timeout: 5000 }, (err) => resolve(!err)));
}

const PROBE = ['--net', '--pid', '--fork', '--kill-child', '--', 'true'];

export async function probeIsolation(mode: 'auto' | 'off'): Promise<Isolation> {
  if (mode === 'off') return none('[tools.exec_policy] isolation = "off"');
  if (process.platform !== 'linux') return none(`namespaces need Linux (this is ${process.platform})`);
  const program = findProgram('unshare', process.env.PATH ?? '');
  if (!program) return none('the unshare program (util-linux) is not installed');
  if (await runs(program, PROBE)) return { method: 'unshare', program, reason: 'PID and network namespaces' };
  if (await runs(program, ['--user', '--map-root-user', ...PROBE]))
    return { method: 'unshare-user', program, reason: 'PID and network namespaces inside a user namespace' };
  return none('the kernel refused new namespaces (unprivileged user namespaces are off)');
}

/** The program and arguments that run `argv` under the isolation (argv itself when there is none). */
export function isolate(isolation: Isolation, argv: readonly string[], network: boolean): { file: string; args: string[] } {
  if (isolation.method === 'none' || !isolation.program) return { file: argv[0], args: argv.slice(1) };
  const user = isolation.method === 'unshare-user' ? ['--user', '--map-root-user'] : [];
  return { file: isolation.program, args: [...user, ...(network ? [] : ['--net']), '--pid', '--fork', '--kill-child', '--', ...argv] };
}
