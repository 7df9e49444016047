import type { FastifySchemaCompiler } from 'fastify';
import { lazyAjv } from '../ajv.ts';

const common = { strict: false, allErrors: false, useDefaults: true, validateSchema: false } as const;
// Query strings and path params arrive as text: coerce them. Bodies are JSON: never coerce.
const coercing = lazyAjv({ ...common, coerceTypes: 'array' });
const exact = lazyAjv({ ...common, coerceTypes: false });

/**
 * Compiles on a route's first request (Ajv caches by schema object): a generation costs no ajv work for routes nobody
 * calls, and a reload recompiles only the changed module's schemas. A missing body counts as `{}`.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const body = httpPart === 'body';
  const validate: ReturnType<FastifySchemaCompiler<object>> = (data) => {
    const fn = (body ? exact() : coercing()).compile(schema);
    const input = body && data === null ? {} : data;
    const ok = fn(input);
    validate.errors = fn.errors;
    if (!ok) return false;
    return input === data ? true : { value: input };
  };
  return validate;
};
