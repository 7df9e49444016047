import type { RootHttp } from '@talon/module-sdk';
import { badRequest, isUuid, notFound } from '@talon/module-sdk';
import type { preParsingHookHandler } from 'fastify';
import type { AgentStore } from './registry.ts';

/** Routes of any module that name an agent in their path: the agents namespace and memory's per-agent routes. */
const AGENT_ROUTE = /^\/api\/(memory\/)?agents\/:id(\/|$)/;

/**
 * One guard for every route that names an agent, whichever module serves it: a non-UUID is a 400, an
 * agent that does not exist a 404 naming it. It runs after the request hooks (authentication, rate
 * limit), so nobody learns whether an agent exists without the key. It is set on those routes as they are
 * added, so no other request passes through it.
 */
export function guardAgentRoutes(app: RootHttp, registry: AgentStore): void {
  const guard: preParsingHookHandler = (request, _reply, payload, done) => {
    const id = (request.params as { id?: string }).id ?? '';
    if (!isUuid(id)) return done(badRequest(`invalid agent id: '${id}' is not a UUID`), payload);
    if (!registry.get(id.toLowerCase())) return done(notFound(`Agent '${id}' not found`), payload);
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    if (AGENT_ROUTE.test(route.url)) route.preParsing = [guard, ...[route.preParsing ?? []].flat()];
  });
}
