import { HttpError, type RootHttp } from '@talon/module-sdk';

/** Deepest nesting of arrays and objects a JSON body may have (docs/modules.md). */
const MAX_JSON_DEPTH = 64;

/** Whether the JSON text nests arrays/objects deeper than max (a linear scan; strings are skipped). */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92 /* \ */) i++;
    } else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93 /* } ] */) depth--;
  }
  return false;
}

/**
 * JSON bodies: an empty body with Content-Type application/json is no body (real clients send that
 * on POST and DELETE), malformed JSON is a 400 that says so, and so is nesting deeper than
 * MAX_JSON_DEPTH (validators and handlers recurse: a deep body must never become a 500). Any
 * +json type is JSON; TOML, NDJSON and every text type arrive as strings.
 */
export function installBodyParsers(app: RootHttp): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(;|$)/, { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) return done(new HttpError(400, `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new HttpError(400, `malformed JSON body: ${(err as Error).message}`), undefined);
    }
  });
  // Fastify tests a pattern against the whole header, parameters included (`text/plain; charset="utf-8"`).
  app.addContentTypeParser(/^(text\/[\w.+-]+|application\/(x-)?toml|application\/x-ndjson)(;|$)/, { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );
}
