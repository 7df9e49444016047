import { defineModule } from '@talon/module-sdk';

/**
 * Sets the header when the request arrives, not when the reply is sent: a
 * reply that a later hook sends (401, 429), an error, a 404 and a hijacked SSE
 * stream (openSse copies the reply's headers) all carry it that way.
 */
export default defineModule({
  register: () => ({
    httpStage: 'identify',
    http(app) {
      app.addHook('onRequest', (request, reply, done) => {
        reply.header('x-request-id', request.id);
        done();
      });
    },
  }),
});
