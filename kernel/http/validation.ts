import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const common = { strict: false, allErrors: false, useDefaults: true } as const;
// Query strings and path params arrive as text: coerce them. Bodies are JSON: never coerce.
const coercing = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
const exact = addFormats(new Ajv({ ...common, coerceTypes: false }));
const cache = new WeakMap<object, ValidateFunction>();

function compiled(ajv: Ajv, schema: object): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

/**
 * Compiles lazily (on a route's first request) and caches by schema object, so
 * building an HTTP generation costs no ajv work for routes nobody calls, and a
 * hot reload recompiles only the schemas of the changed module.
 *
 * A missing body counts as `{}`: clients send POST/DELETE without a body, or
 * an empty one with Content-Type: application/json.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? exact : coercing;
  const validate = (data: unknown) => {
    const fn = compiled(ajv, schema);
    const input = data === null && httpPart === 'body' ? {} : data;
    const ok = fn(input);
    (validate as { errors?: unknown }).errors = fn.errors;
    if (!ok) return false;
    return input !== data ? { value: input } : true;
  };
  return validate as never;
};
