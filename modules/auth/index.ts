import { defineModule } from '@talon/module-sdk';
import { authStatus } from '@talon/auth';
import { authConfigKeys, authConfigSchema, type AuthConfig } from './config.ts';
import { upgradeAuthorization, verdict } from './services/check.ts';
import { checkKeylessListen, keylessRefusal } from './services/network.ts';
import { isPublicRoute } from './services/public-routes.ts';

/** A CORS preflight carries no credentials by design; the cors module answers it. */
const isPreflight = (method: string, headers: Record<string, unknown>) => method === 'OPTIONS' && typeof headers['access-control-request-method'] === 'string';

export default defineModule<AuthConfig>({
  configSchema: authConfigSchema,
  configKeys: authConfigKeys,
  register(ctx) {
    checkKeylessListen(ctx.kernel.apiListen(), ctx.config.api_key, ctx.config.allow_keyless_network);
    ctx.provide(authStatus, { keyRequired: () => ctx.config.api_key !== '', isPublic: isPublicRoute });
    return {
      http(app) {
        // A callback hook: no promise per request on the hot path (every request passes here).
        app.addHook('onRequest', (request, reply, done) => {
          // Read live: a changed api_key applies to the next request.
          const { api_key: apiKey, allow_keyless_network: keyless } = ctx.config;
          const route = request.routeOptions;
          if (isPreflight(request.method, request.headers) || isPublicRoute(request.method, route.url, route.config?.public)) return done();
          const problem = apiKey ? verdict(upgradeAuthorization(request.headers), apiKey) : keyless ? undefined : keylessRefusal(request.ip, request.headers);
          if (!problem) return done();
          request.log.info({ reason: problem, ip: request.ip }, 'request refused: authentication');
          void reply.code(401).header('www-authenticate', 'Bearer').send({ error: problem });
        });
      },
    };
  },
});
