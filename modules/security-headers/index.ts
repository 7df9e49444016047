import { defineModule } from '@talon/module-sdk';
import { SECURITY_HEADERS } from './services/headers.ts';

export default defineModule({
  register(ctx) {
    // Answers the front server gives itself (400 malformed request, 431, 503) carry them too.
    ctx.hooks.kernel.http.baseHeaders.tap('security-headers', (headers) => ({ ...headers, ...SECURITY_HEADERS }));
    return {
      httpStage: 'headers',
      http(app) {
        // onRequest, so replies sent by later hooks, errors and SSE streams carry them too.
        app.addHook('onRequest', (_request, reply, done) => {
          reply.headers(SECURITY_HEADERS);
          done();
        });
      },
    };
  },
});
