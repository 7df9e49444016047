/**
 * An adapter's own configure fields, checked against the schema it declares, then by its own fieldsProblem: the first
 * problem names the field.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { ChannelAdapter } from '@talon/channels';

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
const compiled = new WeakMap<ChannelAdapter, ValidateFunction>();

/** undefined when the fields fit; else a message naming the field. */
export function fieldProblem(adapter: ChannelAdapter, values: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(values)) {
    if (!(key in adapter.fields.properties)) return `unknown field '${key}' for channel '${adapter.name}'`;
  }
  let validate = compiled.get(adapter);
  // Required fields are checked by the caller on the merged configuration: a partial configure names only some.
  if (!validate) compiled.set(adapter, (validate = ajv.compile({ ...adapter.fields, required: [], additionalProperties: true })));
  if (validate(values)) return adapter.fieldsProblem?.(values);
  const error = validate.errors?.[0];
  if (!error) return 'invalid fields';
  const field = error.keyword === 'required' ? String(error.params.missingProperty) : error.instancePath.replace(/^\//, '').split('/')[0];
  return `field '${field}' ${error.message ?? 'is invalid'}`;
}
