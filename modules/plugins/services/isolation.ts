/**
 * What the kernel lets us enforce on hook processes. Probed once: `unshare` into new network and PID namespaces
 * (as root directly, otherwise inside a new user namespace). In a new network namespace there is only a loopback
 * interface that is down: no connection leaves the process. In a new PID namespace the hook is process 1, and
 * everything it starts dies with it (--kill-child), even children that left its process group.
 */
import { execFile } from 'node:child_process';
import { which } from './runtimes.ts';

export interface Isolation {
  /** 'unshare' (root), 'unshare-user' (a user namespace), or 'none'. */
  method: 'unshare' | 'unshare-user' | 'none';
  network: boolean;
  pid: boolean;
  reason: string;
}

const NONE = (reason: string): Isolation => ({ method: 'none', network: false, pid: false, reason });

function tryRun(argv: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout: 5000 }, (err) => resolve(!err));
  });
}

export async function probeIsolation(enabled: boolean): Promise<Isolation> {
  if (!enabled) return NONE('[plugins] isolation = "off"');
  if (process.platform !== 'linux') return NONE(`namespaces need Linux (this is ${process.platform})`);
  const unshare = which('unshare');
  if (!unshare) return NONE('the unshare program (util-linux) is not installed');
  const probe = ['--net', '--pid', '--fork', '--kill-child', '--', 'true'];
  if (await tryRun([unshare, ...probe])) return { method: 'unshare', network: true, pid: true, reason: 'network and PID namespaces' };
  if (await tryRun([unshare, '--user', '--map-root-user', ...probe]))
    return { method: 'unshare-user', network: true, pid: true, reason: 'network and PID namespaces inside a user namespace' };
  return NONE('the kernel refused new namespaces (unprivileged user namespaces are off)');
}

/** The argv prefix that puts a hook in its own namespaces (network only when it may not use the network). */
export function isolationPrefix(isolation: Isolation, allowNetwork: boolean): string[] {
  if (isolation.method === 'none') return [];
  const user = isolation.method === 'unshare-user' ? ['--user', '--map-root-user'] : [];
  return ['unshare', ...user, ...(allowNetwork ? [] : ['--net']), '--pid', '--fork', '--kill-child', '--'];
}
