import type { ErrorObject, ValidateFunction } from 'ajv';
import type { JsonSchema } from '@talon/module-sdk';
import { lazyAjv } from '../ajv.ts';

/** Shared by config files and module manifests; why these options: docs/architecture.md, Configuration. */
export const configAjv = lazyAjv({
  allErrors: true,
  useDefaults: true,
  strict: false,
  validateSchema: false,
  verbose: true,
});
/**
 * By the schema's text: a hot reload brings a new schema object, mostly with the same text (compiling costs ~20 ms).
 */
const compiled = new Map<string, ValidateFunction>();

/** Where validation reports: an unknown key is a warning, anything else an error naming the key. */
export type Problems = { errors: string[]; warnings: string[] };

/** Validates a copy of `input`, reporting into `problems`, and returns the copy with its defaults filled in. */
export function validateSection(schema: JsonSchema, input: unknown, problems: Problems): Record<string, unknown> {
  const text = JSON.stringify(schema);
  const validate = compiled.get(text) ?? configAjv().compile(schema);
  compiled.set(text, validate);
  const value = structuredClone(input ?? {}) as Record<string, unknown>;
  validate(value);
  const explained = new Map(
    (validate.errors ?? []).filter((e) => e.parentSchema?.['x-error']).map((e) => [e.instancePath, e]),
  );
  for (const err of validate.errors ?? []) {
    const own = explained.get(err.instancePath);
    if (own && own !== err) continue; // a key whose schema has its own `x-error` text gets that one message
    if (own || err.keyword !== 'additionalProperties') problems.errors.push(describe(err));
    else
      problems.warnings.push(
        `unknown configuration key '${joinKey(err.instancePath, String(err.params.additionalProperty))}' (ignored)`,
      );
  }
  return value;
}

/** The dotted key an error is about: the JSON pointer's segments (unescaped), and a last key. */
function joinKey(pointer: string, last?: string): string {
  const segments = pointer.split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [...segments, last].filter(Boolean).join('.') || '(top level)';
}

function describe(err: ErrorObject): string {
  const key = joinKey(err.instancePath);
  if (err.parentSchema?.['x-error']) return `invalid value for '${key}': ${String(err.parentSchema['x-error'])}`;
  if (err.keyword === 'required')
    return `missing required key '${joinKey(err.instancePath, String(err.params.missingProperty))}'`;
  const allowed =
    err.keyword === 'enum'
      ? ` (allowed: ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`
      : '';
  return `invalid value for '${key}': ${err.message}${allowed}`;
}

type Schema = {
  default?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema | Schema[];
  additionalProperties?: Schema | boolean;
};

/** Keywords under which Ajv could fill defaults that fillDefaults does not follow: such a schema goes to Ajv. */
const UNFOLLOWED = [
  '$ref',
  '$dynamicRef',
  'allOf',
  'if',
  'then',
  'else',
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  'prefixItems',
  'contains',
];

/** Whether fillDefaults gives what Ajv's useDefaults would (the schema uses only keywords it follows). */
export function fillable(schema: JsonSchema): boolean {
  if (!schema || typeof schema !== 'object') return true;
  const s = schema as Schema & Record<string, unknown>;
  if (UNFOLLOWED.some((k) => k in s) || Array.isArray(s.items)) return false;
  return [...Object.values(s.properties ?? {}), s.items, s.additionalProperties].every((sub) =>
    fillable(sub as JsonSchema),
  );
}

/** Fills in `data` the defaults Ajv's useDefaults would, without compiling a validator; only for `fillable` schemas. */
export function fillDefaults<T>(schema: JsonSchema, data: T): T {
  const s = (schema ?? {}) as Schema;
  if (Array.isArray(data)) for (const item of data) fillDefaults(s.items as JsonSchema, item);
  if (!data || typeof data !== 'object' || Array.isArray(data)) return data;
  const obj = data as Record<string, unknown>;
  const properties = s.properties ?? {};
  for (const [key, sub] of Object.entries(properties)) {
    if (obj[key] === undefined && sub.default !== undefined) obj[key] = structuredClone(sub.default);
    fillDefaults(sub as JsonSchema, obj[key]);
  }
  const extra = s.additionalProperties;
  if (extra && typeof extra === 'object')
    for (const key of Object.keys(obj))
      if (!Object.hasOwn(properties, key)) fillDefaults(extra as JsonSchema, obj[key]);
  return data;
}
