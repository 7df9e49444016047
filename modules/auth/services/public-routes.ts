/** Reachable without a token whatever the route's config says (spec, Authentication 1 and 4). */
const ALWAYS_PUBLIC = new Set(['GET /', 'HEAD /', 'GET /api/health', 'HEAD /api/health', 'POST /mcp']);

/** True when the route (its Fastify url pattern) needs no bearer token. */
export function isPublicRoute(method: string, routeUrl: string | undefined, configPublic: boolean | undefined): boolean {
  if (configPublic) return true;
  return routeUrl !== undefined && ALWAYS_PUBLIC.has(`${method} ${routeUrl}`);
}
