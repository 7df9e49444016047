import type { JsonSchema } from '@talon/module-sdk';

interface Schema {
  default?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema | Schema[];
  additionalProperties?: Schema | boolean;
}

/** Keywords under which Ajv could fill defaults that fillDefaults does not follow: such a schema goes to Ajv. */
const UNFOLLOWED = ['$ref', '$dynamicRef', 'allOf', 'if', 'then', 'else', 'patternProperties', 'dependentSchemas', 'dependencies', 'prefixItems', 'contains'];

/** Whether fillDefaults gives what Ajv's useDefaults would (the schema uses only keywords it follows). */
export function fillable(schema: JsonSchema): boolean {
  if (!schema || typeof schema !== 'object') return true;
  const s = schema as Schema & Record<string, unknown>;
  if (UNFOLLOWED.some((k) => k in s) || Array.isArray(s.items)) return false;
  const subs = [
    ...Object.values(s.properties ?? {}),
    ...(s.items ? [s.items] : []),
    ...(typeof s.additionalProperties === 'object' ? [s.additionalProperties] : []),
  ];
  return subs.every((sub) => fillable(sub as JsonSchema));
}

/**
 * Fills in `data` the defaults Ajv's useDefaults would, without compiling a validator: a key the file does not set
 * needs only its defaults, and compiling one validator per module schema at every start was its largest single cost.
 * Ajv's rules: a `properties` default fills a missing (undefined) property, then the property's own schema applies to
 * its value; `items` and `additionalProperties` apply to what is there; nothing under anyOf, oneOf or not (Ajv
 * ignores defaults in those). Only for schemas that are `fillable`.
 */
export function fillDefaults<T>(schema: JsonSchema, data: T): T {
  const s = (schema ?? {}) as Schema;
  if (Array.isArray(data)) {
    if (s.items && !Array.isArray(s.items)) for (const item of data) fillDefaults(s.items as JsonSchema, item);
    return data;
  }
  if (!data || typeof data !== 'object') return data;
  const obj = data as Record<string, unknown>;
  const properties = s.properties ?? {};
  for (const [key, sub] of Object.entries(properties)) {
    if (obj[key] === undefined && sub.default !== undefined) obj[key] = structuredClone(sub.default);
    fillDefaults(sub as JsonSchema, obj[key]);
  }
  const extra = s.additionalProperties;
  if (extra && typeof extra === 'object') for (const key of Object.keys(obj)) if (!Object.hasOwn(properties, key)) fillDefaults(extra as JsonSchema, obj[key]);
  return data;
}
