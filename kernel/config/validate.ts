import type { ErrorObject, ValidateFunction } from 'ajv';
import type { JsonSchema } from '@talon/module-sdk';
import { ajvFor } from '../ajv.ts';

/** Config files and module manifests share one instance (allErrors: every problem is reported at once). */
// validateSchema off: checking each schema against the draft-07 meta-schema costs ~50 ms of every start;
// module schemas are checked by their own tests instead.
// verbose: an error carries its schema, so a schema's own `x-error` text can replace the generic message.
export const configAjv = () => ajvFor('config', { allErrors: true, useDefaults: true, strict: false, validateSchema: false, verbose: true });
// By the schema's text: a hot reload brings a new schema object, mostly with the same text (compiling costs ~20 ms).
const compiled = new Map<string, ValidateFunction>();

export interface SectionResult {
  value: Record<string, unknown>;
  errors: string[];
  warnings: string[];
}

/**
 * Validates one part of the file. Unknown keys are warnings (naming the key),
 * everything else is an error naming the key and the problem. Defaults are filled in.
 */
export function validateSection(schema: JsonSchema, input: unknown, prefix: string): SectionResult {
  const text = JSON.stringify(schema);
  let validate = compiled.get(text);
  if (!validate) {
    validate = configAjv().compile(schema);
    compiled.set(text, validate);
  }
  const value = structuredClone(input ?? {}) as Record<string, unknown>;
  validate(value);
  const errors: string[] = [];
  const warnings: string[] = [];
  const explained = new Map((validate.errors ?? []).filter((e) => e.parentSchema?.['x-error']).map((e) => [e.instancePath, e]));
  for (const err of validate.errors ?? []) {
    const own = explained.get(err.instancePath);
    if (own) {
      if (own === err) errors.push(`invalid value for '${joinKey(prefix, err.instancePath) || '(top level)'}': ${String(own.parentSchema!['x-error'])}`);
    } else if (err.keyword === 'additionalProperties') {
      const key = joinKey(prefix, err.instancePath, String(err.params.additionalProperty));
      // A key whose table is an open map (like [provider_urls]) never lands here.
      warnings.push(`unknown configuration key '${key}' (ignored)`);
    } else {
      errors.push(describe(prefix, err));
    }
  }
  return { value, errors, warnings };
}

function joinKey(prefix: string, instancePath: string, last?: string): string {
  const parts = [prefix, ...instancePath.split('/').filter(Boolean).map(unescape), last].filter((p) => p !== undefined && p !== '');
  return parts.join('.');
}

function unescape(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function describe(prefix: string, err: ErrorObject): string {
  if (err.keyword === 'required') {
    return `missing required key '${joinKey(prefix, err.instancePath, String(err.params.missingProperty))}'`;
  }
  const key = joinKey(prefix, err.instancePath) || '(top level)';
  const allowed = err.keyword === 'enum' ? ` (allowed: ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})` : '';
  return `invalid value for '${key}': ${err.message}${allowed}`;
}
