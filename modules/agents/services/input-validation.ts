import { Ajv, type ValidateFunction } from 'ajv';
import type { JsonSchema } from '@talon/module-sdk';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

/** Checks a tool input against its schema; returns the problems in words, or undefined. */
export function inputProblem(tool: string, schema: JsonSchema, input: unknown): string | undefined {
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch (err) {
      return `tool '${tool}' has an unusable input schema: ${(err as Error).message}`;
    }
    compiled.set(schema, validate);
  }
  if (validate(input)) return undefined;
  const problems = (validate.errors ?? []).map((e) => {
    const where = e.instancePath ? `'${e.instancePath.slice(1).replace(/\//g, '.')}'` : 'input';
    if (e.keyword === 'required') return `missing required field '${String(e.params.missingProperty)}'`;
    return `${where} ${e.message ?? 'is invalid'}`;
  });
  return `invalid input for tool '${tool}': ${problems.join('; ')}`;
}
