import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

type LogFn = (...args: unknown[]) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Fastify gives every request a child logger carrying its request id. Making
 * a pino child costs more than the rest of a health check, and most requests
 * never log (the access line of polled endpoints is below the level). So a
 * request's logger is this stand-in, one small object whose methods live on
 * the prototype, which creates the real child on the first enabled log call.
 */
class RequestLogger {
  private real?: Logger;
  constructor(
    private readonly parent: Logger,
    private readonly ownBindings: Record<string, unknown>,
    private readonly options: object,
  ) {}
  private get logger(): Logger {
    return (this.real ??= this.parent.child(this.ownBindings, this.options));
  }
  private emit(level: Level, args: unknown[]): void {
    if (this.parent.isLevelEnabled(level)) (this.logger[level] as LogFn)(...args);
  }
  fatal(...args: unknown[]): void {
    this.emit('fatal', args);
  }
  error(...args: unknown[]): void {
    this.emit('error', args);
  }
  warn(...args: unknown[]): void {
    this.emit('warn', args);
  }
  info(...args: unknown[]): void {
    this.emit('info', args);
  }
  debug(...args: unknown[]): void {
    this.emit('debug', args);
  }
  trace(...args: unknown[]): void {
    this.emit('trace', args);
  }
  silent(): void {}
  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.logger.child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return this.parent.isLevelEnabled(level);
  }
  get level(): string {
    return this.real?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
}

export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Record<string, unknown>, options: object): FastifyBaseLogger {
  return new RequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
