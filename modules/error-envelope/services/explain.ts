/**
 * A route's JSON Schema may say, per property, what a client must send: `'x-error': 'a number of USD from 0 to …'`
 * (the same keyword the configuration's schemas use). A request that fails that property's schema is answered with
 * that text instead of Ajv's generic "must be <= 1000000", so the message names what is allowed.
 */

interface AjvError {
  instancePath?: string;
  schemaPath?: string;
  keyword?: string;
  params?: { additionalProperty?: unknown };
}

interface ValidationFailure {
  validation?: unknown;
  validationContext?: unknown;
}

/**
 * The message for a failed request validation, when the failing property's schema has `x-error`, or when the request
 * has a property the schema does not know (Ajv's message does not say which); else undefined.
 */
export function explainedValidation(error: unknown, routeSchema: Record<string, unknown> | undefined): string | undefined {
  const { validation, validationContext: part } = (error ?? {}) as ValidationFailure;
  const first = Array.isArray(validation) ? (validation[0] as AjvError | undefined) : undefined;
  if (first?.keyword === 'additionalProperties' && typeof first.params?.additionalProperty === 'string' && typeof part === 'string')
    return `${part}${first.instancePath ?? ''} has an unknown property '${first.params.additionalProperty}'`;
  if (!first?.schemaPath || typeof part !== 'string' || !routeSchema) return undefined;
  const text = xErrorAlong(routeSchema[part], first.schemaPath);
  if (text === undefined) return undefined;
  const where = `${part}${first.instancePath ?? ''}`;
  return `invalid value for '${where}': ${text}`;
}

/** The innermost `x-error` on the way from the schema's root to the keyword that failed (`#/properties/a/maximum`). */
function xErrorAlong(schema: unknown, schemaPath: string): string | undefined {
  const steps = schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean);
  let node = schema;
  let found = xError(node);
  for (const step of steps.slice(0, -1)) {
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[decodeURIComponent(step).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    found = xError(node) ?? found;
  }
  return found;
}

const xError = (node: unknown): string | undefined => {
  const text = node && typeof node === 'object' ? (node as Record<string, unknown>)['x-error'] : undefined;
  return typeof text === 'string' ? text : undefined;
};
