import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * Fastify gives every request a child logger carrying its request id. Making a pino child costs
 * more than the rest of a health check, and most requests never log (the access line of polled
 * endpoints is below the level). So a request's logger is this stand-in, one small object whose
 * methods live on the prototype, which creates the real child on the first enabled log call.
 */
class RequestLogger {
  private real?: Logger;
  constructor(
    readonly parent: Logger,
    private readonly ownBindings: Record<string, unknown>,
    private readonly options: object,
  ) {}
  get logger(): Logger {
    return (this.real ??= this.parent.child(this.ownBindings, this.options));
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
for (const level of LEVELS) {
  Object.defineProperty(RequestLogger.prototype, level, {
    value(this: RequestLogger, ...args: unknown[]) {
      if (this.parent.isLevelEnabled(level)) (this.logger[level] as (...a: unknown[]) => void)(...args);
    },
  });
}

export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Record<string, unknown>, options: object): FastifyBaseLogger {
  return new RequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
