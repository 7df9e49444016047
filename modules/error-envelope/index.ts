import { defineModule, errorBody, type RootHttp } from '@talon/module-sdk';
import { classify } from './services/classify.ts';
import { installBodyParsers } from './services/json-body.ts';

export default defineModule({
  register: () => ({ http }),
});

function http(app: RootHttp): void {
  installBodyParsers(app);
  app.setErrorHandler((error, request, reply) => {
    const { bodyLimit, schema } = request.routeOptions;
    const result = classify(error, { contentType: request.headers['content-type'], bodyLimit, schema: schema as Record<string, unknown> | undefined });
    if (result.internal) request.log.error({ err: error }, 'request failed');
    else if (result.statusCode >= 500) request.log.warn({ statusCode: result.statusCode, error: result.message }, 'request failed');
    else request.log.debug({ statusCode: result.statusCode, error: result.message }, 'request refused');
    if (result.headers) reply.headers(result.headers);
    return reply.code(result.statusCode).type('application/json; charset=utf-8').send(errorBody(result.message, result.extra));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    return reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send({ error: `no route ${request.method} ${path}` });
  });
}
