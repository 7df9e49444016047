import { defineModule } from '@talon/module-sdk';
import { authHooks, authStatus } from '@talon/auth';
import { authConfigKeys, authConfigSchema, type AuthConfig } from './config.ts';
import { sameKey, upgradeAuthorization, verdict } from './services/check.ts';
import { otherCredential, principalOf } from './services/principals.ts';
import { checkKeylessListen, foreignHost, keylessRefusal } from './services/network.ts';
import { isPublicRoute, openedByOwner } from './services/public-routes.ts';

/** A CORS preflight carries no credentials by design; the cors module answers it. */
const isPreflight = (method: string, headers: Record<string, unknown>) => method === 'OPTIONS' && typeof headers['access-control-request-method'] === 'string';

export default defineModule<AuthConfig>({
  configSchema: authConfigSchema,
  configKeys: authConfigKeys,
  hooks: [authHooks],
  register(ctx) {
    checkKeylessListen(ctx.kernel.apiListen(), ctx.config.api_key, ctx.config.allow_keyless_network);
    const key = () => ctx.config.api_key;
    ctx.provide(authStatus, {
      keyRequired: () => key() !== '',
      isPublic: isPublicRoute,
      isApiKey: (candidate) => key() !== '' && sameKey(candidate, key()),
      verify: (authorization) => (key() ? verdict(authorization, key()) : undefined),
    });
    // Sign-in modules (oidc, pairing) tap this to admit their credentials; with no tap only the api_key admits.
    const { authenticate } = ctx.hooks.get(authHooks);
    return {
      httpStage: 'authenticate',
      http(app) {
        // A callback hook: no promise per request on the hot path (every request passes here).
        app.addHook('onRequest', (request, reply, done) => {
          // Read live: a changed api_key applies to the next request.
          const { api_key: apiKey, allow_keyless_network: keyless } = ctx.config;
          const route = request.routeOptions;
          const rebound = !apiKey && !keyless ? foreignHost(request.headers.host) : undefined;
          if (rebound) {
            request.log.info({ host: request.headers.host, ip: request.ip }, 'request refused: foreign Host on a keyless service');
            void reply.code(403).send({ error: rebound });
            return;
          }
          if (isPreflight(request.method, request.headers) || isPublicRoute(request.method, route.url, route.config?.public)) return done();
          if (openedByOwner(route.config?.publicWhen)) return done();
          const problem = apiKey ? verdict(upgradeAuthorization(request.headers), apiKey) : keyless ? undefined : keylessRefusal(request.ip, request.headers);
          if (!problem) return done();
          const principal = apiKey ? principalOf(() => authenticate.call(request), request.log) : undefined;
          const other = otherCredential(request, principal);
          if (other === 'pass') return done();
          if (other !== 'none') {
            request.log.info({ reason: other.forbidden, ip: request.ip }, 'request refused: not permitted for this credential');
            void reply.code(403).send({ error: other.forbidden });
            return;
          }
          request.log.info({ reason: problem, ip: request.ip }, 'request refused: authentication');
          void reply.code(401).header('www-authenticate', 'Bearer').send({ error: problem });
        });
      },
    };
  },
});
