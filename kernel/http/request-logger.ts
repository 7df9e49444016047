import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

// A pino child per request (Fastify's, carrying the request id) costs more than a whole health check and most requests
// never log: this stand-in (one small object, its methods on the prototype) makes the real child on the first enabled
// call.
class RequestLogger {
  private real?: Logger;
  constructor(
    readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}
  get logger(): Logger {
    return (this.real ??= this.parent.child(this.bindings, this.options));
  }
  silent(): void {}
  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.logger.child(bindings, options);
  }
  get level(): string {
    return this.real?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
}
for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) {
  Object.defineProperty(RequestLogger.prototype, level, {
    value(this: RequestLogger, ...args: unknown[]) {
      if (this.parent.isLevelEnabled(level)) (this.logger[level] as (...a: unknown[]) => void)(...args);
    },
  });
}

export const lazyChildLogger = (
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: object,
): FastifyBaseLogger =>
  new RequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger;
