import { createRequire } from 'node:module';
import pino, { type Logger, type DestinationStream } from 'pino';
import type { SyncHook } from 'tapable';
import { redactSecrets } from '@talon/module-sdk';

/** Paths pino blanks out wherever they appear, so secrets never reach a log line. */
const REDACT = ['api_key', 'apiKey', 'key', 'token', 'secret', 'password', 'authorization'].flatMap((k) => [k, `*.${k}`]);
REDACT.push('*.*.api_key', 'headers.authorization', 'req.headers.authorization', 'req.headers.cookie', '*.headers["x-api-key"]');

/** The first lines are kept for log sinks that start after them (the logs module writes them to the file). */
const EARLY_LINES = 2000;

/** Hands every line to the `log.line` hook, and keeps the first EARLY_LINES for sinks that come later. */
class HookSink implements DestinationStream {
  readonly early: string[] = [];
  constructor(private readonly hook: SyncHook<[string]>) {}
  write(line: string): void {
    if (this.early.length < EARLY_LINES) this.early.push(line);
    if (this.hook.taps.length) this.hook.call(line);
  }
}

export interface KernelLogger {
  log: Logger;
  earlyLines(): readonly string[];
  setLevel(level: string): void;
}

/** Structured logs (pino): JSON lines, readable ones on a terminal; every line also goes to the `log.line` hook. */
export function createLogger(options: { level: string; stdout?: boolean; hook: SyncHook<[string]> }): KernelLogger {
  const sink = new HookSink(options.hook);
  const streams: pino.StreamEntry[] = [{ level: 'trace', stream: sink }];
  if (options.stdout !== false) streams.push({ level: 'trace', stream: stdoutStream() });
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
  // A copy: lines after the call reach the caller through its tap (tap and copy in one turn: no gap, no repeat).
  return { log, earlyLines: () => [...sink.early], setLevel: (level) => (log.level = level) };
}

function stdoutStream(): DestinationStream {
  if (!process.stdout.isTTY) return pino.destination({ dest: 1, sync: false });
  // Loaded only for a terminal: a person reads these lines, a machine reads JSON.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
}
