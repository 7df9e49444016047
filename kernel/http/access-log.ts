import { LogController, type FastifyRequest, type FastifyReply } from 'fastify';

/** One structured line per completed request (carrying the request id), none when it starts. */
export class AccessLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'reqId' });
  }

  override incomingRequest(): void {}

  override requestCompleted(err: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Polled endpoints (route option `quiet`) log at debug level, so probes do not drown the log. Levels are checked
    // before the route is looked at: Fastify builds routeOptions anew at each read.
    const log = request.log as unknown as { isLevelEnabled(level: string): boolean };
    if (!log.isLevelEnabled('info')) return;
    const quiet = request.routeOptions.config?.quiet === true;
    if (!log.isLevelEnabled(quiet ? 'debug' : 'info')) return;
    const line = {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      err: err ?? undefined,
    };
    if (quiet) request.log.debug(line, 'request completed');
    else request.log.info(line, 'request completed');
  }
}
