/** A log line as the view shows it: the fields of a pino JSON line a person reads, and the whole record for details. */
const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

export interface LogRecord {
  n: number;
  time?: Date;
  level: string;
  /** The module that logged it; on an access line, the module whose route answered. */
  module: string;
  msg: string;
  method?: string;
  url?: string;
  status?: number;
  ms?: number;
  reqId?: string;
  /** The error: an access line's `error`, or a logged `err`'s message. */
  error?: string;
  /** The whole record, indented (the raw text when the line is no JSON). */
  full: string;
}

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' ? v : undefined);

export function parseRecord(n: number, raw: string): LogRecord {
  let j: Json;
  try {
    j = JSON.parse(raw) as Json;
  } catch {
    return { n, level: '', module: '', msg: raw, full: raw };
  }
  const level = typeof j.level === 'number' ? (LEVEL_NAMES[j.level] ?? String(j.level)) : String(j.level ?? '');
  const time = typeof j.time === 'number' || typeof j.time === 'string' ? new Date(j.time) : undefined;
  const err = j.err && typeof j.err === 'object' ? str((j.err as Json).message) : undefined;
  return {
    n,
    time: time && !Number.isNaN(time.getTime()) ? time : undefined,
    level,
    module: str(j.routeModule) ?? str(j.module) ?? '',
    msg: str(j.msg) ?? '',
    method: str(j.method),
    url: str(j.url),
    status: num(j.statusCode),
    ms: num(j.ms),
    reqId: str(j.reqId),
    error: str(j.error) ?? err,
    full: JSON.stringify(j, null, 2),
  };
}
