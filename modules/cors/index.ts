import { defineModule, HttpError } from '@talon/module-sdk';
import { authStatus } from '@talon/auth';
import { decideOrigin } from './services/origins.ts';
import { applyCors } from './services/headers.ts';
import { corsConfigKeys, type CorsConfig } from './config.ts';

export default defineModule<CorsConfig>({
  configKeys: corsConfigKeys,
  configAliases: [{ from: 'cors_origin', to: 'cors_origins' }],
  register(ctx) {
    // Without the auth module (allowed only while no api_key is set) the API counts as open.
    const auth = ctx.tryUse(authStatus);
    return {
      httpStage: 'origin',
      http(app) {
        // Runs on every request, so requests without an Origin (curl, SDKs, server-to-server) cost one header
        // lookup. Settings are read live. A request from a refused origin is refused outright: browsers attach
        // Origin to cross-site form posts and WebSocket handshakes, which CORS headers alone let through.
        app.addHook('onRequest', (request, reply, done) => {
          const origin = request.headers.origin;
          if (!origin) return done();
          const settings = { keyRequired: auth?.keyRequired() ?? false, cors_origins: ctx.config.cors_origins };
          const decision = decideOrigin(origin, settings, request.headers.host);
          if (decision === 'deny') return done(new HttpError(403, `origin '${origin}' is not allowed (see cors_origins)`));
          if (applyCors(request, reply, decision === 'any' ? '*' : origin)) {
            void reply.code(204).send();
            return;
          }
          done();
        });
      },
    };
  },
});
