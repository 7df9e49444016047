import type { Logger } from 'pino';
import type { HttpResponseEvent } from '@talon/module-sdk';

/**
 * The access log: one line per answered request (none when it arrives), carrying the request id under `reqId` as
 * the request loggers do, the module whose route answered (`routeModule`: `module` is this logger's own binding, and
 * pino would write the key twice) and, for a refused or failed request, the `error` it was answered with. Polled
 * endpoints (route option `quiet`) log at debug level, so probes do not drown the log; the level is checked before
 * the line is built.
 */
export function accessLog(log: Logger): (event: HttpResponseEvent) => void {
  return (event) => {
    if (!log.isLevelEnabled(event.quiet ? 'debug' : 'info')) return;
    const line = {
      reqId: event.id,
      method: event.method,
      url: event.url,
      statusCode: event.statusCode,
      ms: Math.round(event.durationMs * 100) / 100,
      routeModule: event.module,
      error: event.error,
    };
    if (event.quiet) log.debug(line, 'request completed');
    else log.info(line, 'request completed');
  };
}
