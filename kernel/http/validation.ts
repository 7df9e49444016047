import type { Ajv, ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { lazyAjv } from '../ajv.ts';

const common = { strict: false, allErrors: false, useDefaults: true, validateSchema: false } as const;
// Query strings and path params arrive as text: coerce them. Bodies are JSON: never coerce.
const coercing = lazyAjv({ ...common, coerceTypes: 'array' });
const exact = lazyAjv({ ...common, coerceTypes: false });
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
  const validate = (data: unknown) => {
    const fn = compiled(httpPart === 'body' ? exact() : coercing(), schema);
    const input = data === null && httpPart === 'body' ? {} : data;
    const ok = fn(input);
    (validate as { errors?: unknown }).errors = fn.errors;
    if (!ok) return false;
    return input !== data ? { value: input } : true;
  };
  return validate as never;
};
