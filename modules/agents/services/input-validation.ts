import { Ajv, type ValidateFunction } from 'ajv';
import type { JsonSchema } from '@talon/module-sdk';

/** Checks tool inputs against their schemas; each schema is compiled once (tool lists hand out the same objects). */
export class InputValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly compiled = new WeakMap<object, ValidateFunction>();

  /** The problems in words, or undefined when the input matches. */
  problem(tool: string, schema: JsonSchema, input: unknown): string | undefined {
    let validate = this.compiled.get(schema);
    if (!validate) {
      try {
        validate = this.ajv.compile(schema);
      } catch (err) {
        return `tool '${tool}' has an unusable input schema: ${(err as Error).message}`;
      }
      this.compiled.set(schema, validate);
    }
    if (validate(input)) return undefined;
    const problems = (validate.errors ?? []).map((e) => {
      const where = e.instancePath ? `'${e.instancePath.slice(1).replace(/\//g, '.')}'` : 'input';
      if (e.keyword === 'required') return `missing required field '${String(e.params.missingProperty)}'`;
      return `${where} ${e.message ?? 'is invalid'}`;
    });
    return `invalid input for tool '${tool}': ${problems.join('; ')}`;
  }
}
