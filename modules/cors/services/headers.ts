import type { FastifyReply, FastifyRequest } from '@talon/module-sdk';

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const EXPOSE_HEADERS = 'x-request-id, retry-after, content-disposition';
const MAX_AGE_SECONDS = '600';

/** Adds Origin to Vary, keeping what another hook put there. */
function varyOnOrigin(reply: FastifyReply): void {
  const current = reply.getHeader('vary');
  if (!current) reply.header('vary', 'Origin');
  else if (!/(^|,)\s*origin\s*(,|$)/i.test(String(current))) reply.header('vary', `${current}, Origin`);
}

/**
 * The CORS headers for an allowed origin. Returns true when the request was a
 * preflight, which is answered here (204) before authentication runs.
 */
export function applyCors(request: FastifyRequest, reply: FastifyReply, allowOrigin: string): boolean {
  reply.header('access-control-allow-origin', allowOrigin);
  reply.header('access-control-expose-headers', EXPOSE_HEADERS);
  if (allowOrigin !== '*') varyOnOrigin(reply);
  if (request.method !== 'OPTIONS' || !request.headers['access-control-request-method']) return false;
  reply.header('access-control-allow-methods', ALLOW_METHODS);
  const asked = request.headers['access-control-request-headers'];
  if (asked) {
    reply.header('access-control-allow-headers', asked);
    reply.header('vary', `${reply.getHeader('vary') ?? 'Origin'}, Access-Control-Request-Headers`);
  }
  reply.header('access-control-max-age', MAX_AGE_SECONDS);
  return true;
}
