import { defineModule } from '@talon/module-sdk';
import { authStatus } from '@talon/auth';
import { authConfigKeys, type AuthConfig } from './config.ts';
import { verdict } from './services/check.ts';
import { isPublicRoute } from './services/public-routes.ts';

/** A CORS preflight carries no credentials by design; the cors module answers it. */
const isPreflight = (method: string, headers: Record<string, unknown>) => method === 'OPTIONS' && typeof headers['access-control-request-method'] === 'string';

export default defineModule<AuthConfig>({
  configKeys: authConfigKeys,
  register(ctx) {
    ctx.provide(authStatus, { keyRequired: () => ctx.config.api_key !== '', isPublic: isPublicRoute });
    return {
      http(app) {
        // A callback hook: no promise per request on the hot path (every request passes here).
        app.addHook('onRequest', (request, reply, done) => {
          // Read live: a changed api_key applies to the next request.
          const apiKey = ctx.config.api_key;
          const route = request.routeOptions;
          if (!apiKey || isPreflight(request.method, request.headers) || isPublicRoute(request.method, route.url, route.config?.public)) return done();
          const problem = verdict(request.headers.authorization, apiKey);
          if (!problem) return done();
          request.log.info({ reason: problem }, 'request refused: authentication');
          void reply.code(401).header('www-authenticate', 'Bearer').send({ error: problem });
        });
      },
    };
  },
});
