/**
 * The fallback when no PID namespace is available: every process a sandboxed run starts inherits a marker variable,
 * and at the end of the run /proc is walked for processes that still carry it. That finds the descendants that left
 * the process group (setsid, double fork), which a group kill misses. A process that also clears its own
 * environment escapes this walk; the PID namespace has no such gap (docs/agents.md, shell sandbox).
 */
import { readdir, readFile } from 'node:fs/promises';

export const RUN_MARKER = 'TALON_SANDBOX_RUN';

/** SIGKILLs every process whose environment holds RUN_MARKER=runId; passes again until none is left (max 5). */
export async function killMarked(runId: string): Promise<number> {
  if (process.platform !== 'linux') return 0;
  const needle = Buffer.from(`\0${RUN_MARKER}=${runId}\0`);
  let killed = 0;
  for (let pass = 0; pass < 5; pass++) {
    const found = await marked(needle);
    if (!found.length) break;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // gone meanwhile
      }
    }
  }
  return killed;
}

async function marked(needle: Buffer): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const found: number[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      if (pid === process.pid) return;
      try {
        // A leading NUL so the first variable matches too.
        const environ = Buffer.concat([Buffer.from([0]), await readFile(`/proc/${pid}/environ`), Buffer.from([0])]);
        if (environ.includes(needle) && !(await isZombie(pid))) found.push(pid);
      } catch {
        // exited, or not ours to read
      }
    }),
  );
  return found;
}

async function isZombie(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
}
