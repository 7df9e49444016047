import type { FastifySchemaCompiler } from 'fastify';
import { lazyAjv } from '../ajv.ts';

const common = { strict: false, allErrors: false, useDefaults: true, validateSchema: false } as const;

/**
 * Route validators with Ajv instances of their own (Ajv keeps every schema it compiled), compiled at first use; no body
 * is `{}`.
 */
export function validatorCompiler(): FastifySchemaCompiler<object> {
  // Query strings and path params arrive as text: coerce them. Bodies are JSON: never coerce.
  const coercing = lazyAjv({ ...common, coerceTypes: 'array' });
  const exact = lazyAjv({ ...common, coerceTypes: false });
  return ({ schema, httpPart }) => {
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
}
