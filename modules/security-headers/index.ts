import { defineModule } from '@talon/module-sdk';
import { SECURITY_HEADERS } from './services/headers.ts';

export default defineModule({
  http(app) {
    // onRequest, so replies sent by later hooks, errors and SSE streams carry them too.
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(SECURITY_HEADERS);
      done();
    });
  },
});
