/**
 * Ending a stdio server with everything it started: `npx pkg` runs the real
 * server as a grandchild, which a plain kill of the child leaves running. The
 * tree is read from /proc (Linux); elsewhere only the child itself is known.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** pid → ppid and state of every process, from /proc/<pid>/stat. */
function processTable(): Map<number, { ppid: number; state: string }> {
  const table = new Map<number, { ppid: number; state: string }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(entry), { ppid: Number(ppid), state });
    } catch {
      // the process ended while we read
    }
  }
  return table;
}

/** The process and all its descendants, parents first. */
export function processTree(pid: number): number[] {
  const table = processTable();
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, info] of table) if (info.ppid === tree[i]) tree.push(child);
  }
  return tree;
}

/** False once the process is gone or a zombie (it ran to its end; only the reaping is left). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

function signal(pids: readonly number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM to every process of the tree, SIGKILL to those still alive after the grace period. */
export async function killTree(pids: readonly number[], graceMs: number): Promise<void> {
  signal(pids, 'SIGTERM');
  const end = Date.now() + graceMs;
  while (pids.some(isAlive) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
  signal(pids.filter(isAlive), 'SIGKILL');
}
