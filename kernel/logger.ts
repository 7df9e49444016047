import { createRequire } from 'node:module';
import pino, { type DestinationStream } from 'pino';
import type { SyncHook } from 'tapable';
import { redactSecrets, REDACTED } from '@talon/module-sdk';

// redactSecrets blanks string values of secret-named keys in plain objects; these paths also catch other values,
// class instances and headers.
const REDACT = ['api_key', 'apiKey', 'key', 'token', 'secret', 'password', 'authorization'].flatMap((k) => [
  k,
  `*.${k}`,
]);
REDACT.push(
  '*.*.api_key',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.headers["x-api-key"]',
);
/** The first lines of a run are kept for sinks that start later (the logs module writes them to its file). */
const EARLY_LINES = 2000;

export type KernelLogger = ReturnType<typeof createLogger>;

/** Structured logs (pino): JSON lines, readable ones on a terminal; every line also goes to the `log.line` hook. */
export function createLogger(options: { level: string; stdout?: boolean; hook: SyncHook<[string]> }) {
  const early: string[] = [];
  const write = (line: string) => {
    if (early.length < EARLY_LINES) early.push(line);
    if (options.hook.taps.length) options.hook.call(line);
  };
  const streams: pino.StreamEntry[] = [{ level: 'trace', stream: { write } }];
  if (options.stdout !== false) streams.push({ level: 'trace', stream: stdoutStream() });
  const log = pino(
    {
      level: options.level,
      redact: { paths: REDACT, censor: REDACTED },
      formatters: { log: redactSecrets },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.multistream(streams),
  );
  // A copy: lines after the call reach the caller through its tap (tap and copy in one turn: no gap, no repeat).
  return { log, earlyLines: (): readonly string[] => [...early], setLevel: (level: string) => (log.level = level) };
}

function stdoutStream(): DestinationStream {
  if (!process.stdout.isTTY) return pino.destination({ dest: 1, sync: false });
  // Loaded only for a terminal: a person reads these lines, a machine reads JSON.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
}
