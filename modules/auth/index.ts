import { defineModule } from '@talon/module-sdk';
import { isPublicRoute } from './api.ts';
import { verdict } from './services/check.ts';

/** A CORS preflight carries no credentials by design; the cors module answers it. */
const isPreflight = (method: string, headers: Record<string, unknown>) => method === 'OPTIONS' && typeof headers['access-control-request-method'] === 'string';

export default defineModule({
  http(app, ctx) {
    app.addHook('onRequest', async (request, reply) => {
      // Read live: a changed api_key applies to the next request.
      const apiKey = ctx.settings.api_key;
      if (!apiKey) return;
      if (isPreflight(request.method, request.headers)) return;
      if (isPublicRoute(request.method, request.routeOptions.url, request.routeOptions.config?.public)) return;
      const problem = verdict(request.headers.authorization, apiKey);
      if (!problem) return;
      request.log.info({ reason: problem }, 'request refused: authentication');
      return reply.code(401).header('www-authenticate', 'Bearer').send({ error: problem });
    });
  },
});
