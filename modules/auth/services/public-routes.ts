/** Reachable without a token whatever the route's config says (spec, Authentication 1 and 4). */
const ALWAYS_PUBLIC = new Set(['GET /', 'HEAD /', 'GET /api/health', 'HEAD /api/health', 'POST /mcp']);

/** True when the route (its Fastify url pattern) needs no bearer token. */
export function isPublicRoute(method: string, routeUrl: string | undefined, configPublic: boolean | undefined): boolean {
  if (configPublic) return true;
  return routeUrl !== undefined && ALWAYS_PUBLIC.has(`${method} ${routeUrl}`);
}

/** A route its owner opens at run time (`config.publicWhen`); a predicate that throws keeps the route closed. */
export function openedByOwner(publicWhen: (() => boolean) | undefined): boolean {
  if (!publicWhen) return false;
  try {
    return publicWhen() === true;
  } catch {
    return false;
  }
}
