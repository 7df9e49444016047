import { readdirSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';

/** Appends to `talon-YYYY-MM-DD.log`, switching files when the UTC day changes. */
export class DailyFile {
  private day = '';
  private dest?: ReturnType<typeof pino.destination>;
  constructor(private readonly dir: string) {}

  write(line: string): void {
    const day = new Date().toISOString().slice(0, 10);
    if (day !== this.day) {
      void this.end();
      this.day = day;
      this.dest = pino.destination({ dest: path.join(this.dir, `talon-${day}.log`), sync: false, mkdir: true });
    }
    this.dest!.write(line);
  }

  /** Flushes and ends the file; one still opening is ended once open (ending it earlier throws). */
  end(): Promise<void> {
    const dest = this.dest;
    this.dest = undefined;
    this.day = '';
    if (!dest) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        dest.once('close', () => resolve());
        dest.end();
      };
      if ((dest as unknown as { fd: number }).fd >= 0) finish();
      else dest.once('ready', finish);
    });
  }
}

/** Deletes daily log files older than the retention window (run at start). */
export function pruneLogs(dir: string, retentionDays: number, now = Date.now()): string[] {
  const removed: string[] = [];
  const cutoff = now - retentionDays * 24 * 3600 * 1000;
  for (const name of safeList(dir)) {
    const m = /^talon-(\d{4}-\d{2}-\d{2})\.log$/.exec(name);
    if (!m) continue;
    const file = path.join(dir, name);
    const day = Date.parse(`${m[1]}T00:00:00Z`);
    const stamp = Number.isNaN(day) ? statSync(file).mtimeMs : day + 24 * 3600 * 1000;
    if (stamp < cutoff) {
      unlinkSync(file);
      removed.push(name);
    }
  }
  return removed;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
