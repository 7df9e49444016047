import type { FastifyInstance } from 'fastify';
import { HttpError } from '@talon/module-sdk';

/**
 * JSON bodies: an empty body with Content-Type application/json is no body
 * (real clients send that on POST and DELETE), malformed JSON is a 400 that
 * says so. Other text types arrive as strings.
 */
export function installBodyParsers(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json$/, { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new HttpError(400, `malformed JSON body: ${(err as Error).message}`), undefined);
    }
  });
  app.addContentTypeParser(['application/toml', 'application/x-toml', 'application/x-ndjson', 'text/*'], { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );
}
