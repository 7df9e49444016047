import { readdirSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import pino, { type Logger, type DestinationStream } from 'pino';
import type { LogBus } from '@talon/module-sdk';
import { redactSecrets } from './config/redact.ts';

const RETENTION_DAYS = 7;

/** Paths pino blanks out wherever they appear, so secrets never reach a log line. */
const REDACT = [
  'api_key',
  '*.api_key',
  '*.*.api_key',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.headers["x-api-key"]',
];

/** Appends to `talon-YYYY-MM-DD.log`, switching files when the UTC day changes. */
class DailyFile implements DestinationStream {
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
  flush(): void {
    try {
      this.dest?.flushSync();
    } catch {
      // not yet open: nothing to flush
    }
  }
  /** Ends the file; one still opening is ended once open (ending it earlier throws). */
  end(): Promise<void> {
    const dest = this.dest;
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

/** Fan-out of log lines to SSE subscribers of /api/logs/stream. */
class Bus implements DestinationStream, LogBus {
  private readonly listeners = new Set<(line: string) => void>();
  write(line: string): void {
    for (const listener of this.listeners) listener(line.trimEnd());
  }
  subscribe(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Deletes daily log files older than the retention window (run at start). */
export function pruneLogs(dir: string, now = Date.now()): string[] {
  const removed: string[] = [];
  const cutoff = now - RETENTION_DAYS * 24 * 3600 * 1000;
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

export interface KernelLogger {
  log: Logger;
  bus: LogBus;
  setLevel(level: string): void;
  close(): Promise<void>;
}

export function createLogger(options: { logsDir: string; level: string; stdout?: boolean }): KernelLogger {
  const file = new DailyFile(options.logsDir);
  const bus = new Bus();
  const streams: pino.StreamEntry[] = [
    { level: 'trace', stream: file },
    { level: 'trace', stream: bus },
  ];
  if (options.stdout !== false) streams.push({ level: 'trace', stream: pino.destination({ dest: 1, sync: false }) });
  const log = pino(
    {
      level: options.level,
      redact: { paths: REDACT, censor: '<redacted>' },
      // Any key named like a secret (bot_token, db_password...), at any depth, besides the fixed paths above.
      formatters: { log: (object) => redactSecrets(object) },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.multistream(streams),
  );
  return {
    log,
    bus,
    setLevel: (level) => (log.level = level),
    close: () => {
      file.flush();
      return file.end();
    },
  };
}
