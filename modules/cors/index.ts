import cors from '@fastify/cors';
import { defineModule, HttpError } from '@talon/module-sdk';
import { decideOrigin } from './services/origins.ts';

const COMMON = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
  exposedHeaders: ['x-request-id', 'retry-after', 'content-disposition'],
  maxAge: 600,
  // Preflights are answered in the onRequest hook, before authentication.
  hook: 'onRequest' as const,
};

export default defineModule({
  http(app, ctx) {
    // A delegator sees the request, so the settings are read live and a request
    // from a refused origin can be refused outright: browsers attach Origin to
    // cross-site form posts and WebSocket handshakes, which CORS alone lets through.
    void app.register(cors, {
      delegator: (request, callback) => {
        const origin = request.headers.origin;
        if (!origin) return callback(null, { ...COMMON, origin: false });
        const decision = decideOrigin(origin, ctx.settings, request.headers.host);
        if (decision === 'deny') return callback(new HttpError(403, `origin '${origin}' is not allowed (see cors_origins)`), { origin: false });
        return callback(null, { ...COMMON, origin: decision === 'any' ? '*' : origin });
      },
    });
  },
});
