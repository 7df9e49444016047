import type { ModuleContext, RouteInfo, Routes } from '@talon/module-sdk';
import type { AuthStatus } from '@talon/auth';
import { buildOpenApi } from '../services/openapi.ts';

export function openApiRoutes(app: Routes, ctx: ModuleContext, auth: () => AuthStatus | undefined): void {
  // Each HTTP generation has its own routes array: caching by its identity keeps
  // the document in step with hot reloads without rebuilding it per request.
  const cache = new WeakMap<readonly RouteInfo[], string>();
  const isPublic = (route: RouteInfo) => auth()?.isPublic(route.method, route.url, route.public) ?? route.public;
  app.get('/api/openapi.json', { schema: { summary: 'OpenAPI 3.1 description of this service' } }, async (_request, reply) => {
    const routes = ctx.kernel.routes();
    let text = cache.get(routes);
    if (!text) {
      text = JSON.stringify(buildOpenApi(routes, { version: ctx.kernel.version, isPublic }));
      cache.set(routes, text);
    }
    return reply.type('application/json; charset=utf-8').send(text);
  });
}
