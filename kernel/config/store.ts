import type { ConfigApi, JsonSchema, KernelSettings } from '@talon/module-sdk';
import { kernelSettingsSchema } from '@talon/module-sdk';
import { ConfigError } from './errors.ts';
import { applyAliases, parseToml, persistValue, readConfigFile, setIn } from './file.ts';
import { redactSecrets } from './redact.ts';
import { validateSection } from './validate.ts';
import { readFileSync } from 'node:fs';

interface Section {
  module: string;
  enabled: boolean;
  schema?: JsonSchema;
}

export interface Validated {
  effective: Record<string, unknown>;
  warnings: string[];
}

/** Keys whose change only takes effect after a restart. */
const RESTART_KEYS = new Set(['api_listen', 'modules', 'module_paths']);

/**
 * The configuration: the file's data, the effective values (defaults filled
 * in), and the sections that modules own. Changes go through validation first,
 * so the running configuration is never half-applied.
 */
export class ConfigStore implements Omit<ConfigApi, 'set' | 'reload'> {
  private raw: Record<string, unknown> = {};
  private current: Record<string, unknown> = {};
  private readonly sections = new Map<string, Section>();

  constructor(readonly file: string) {}

  /** Reads the file. Throws ConfigError naming the key and the problem. */
  load(): string[] {
    const { raw } = readConfigFile(this.file);
    const { effective, warnings } = this.validate(raw);
    this.raw = raw;
    this.current = effective;
    return warnings;
  }

  /** Declares a module's section (before the module's code is loaded its schema may be unknown). */
  declareSection(section: string, module: string, enabled: boolean, schema?: JsonSchema): void {
    this.sections.set(section, { module, enabled, schema });
  }

  /** Re-validates with the sections' current schemas and adopts the result. */
  revalidate(): string[] {
    const { effective, warnings } = this.validate(this.raw);
    this.current = effective;
    return warnings;
  }

  validate(raw: Record<string, unknown>): Validated {
    const warnings: string[] = [];
    const errors: string[] = [];
    const data = applyAliases(raw, warnings);
    const kernelKeys = Object.keys(kernelSettingsSchema.properties);
    const kernelPart = Object.fromEntries(Object.entries(data).filter(([k]) => kernelKeys.includes(k)));
    const kernel = validateSection(kernelSettingsSchema, kernelPart, '');
    errors.push(...kernel.errors);
    warnings.push(...kernel.warnings);
    const effective: Record<string, unknown> = { ...kernel.value };
    for (const [key, value] of Object.entries(data)) {
      if (kernelKeys.includes(key)) continue;
      const section = this.sections.get(key);
      if (!section) {
        warnings.push(`unknown configuration key '${key}' (ignored)`);
        effective[key] = value;
        continue;
      }
      if (section.enabled && section.schema) {
        if (!value || typeof value !== 'object' || Array.isArray(value)) {
          errors.push(`invalid value for '${key}': must be a table ([${key}])`);
          continue;
        }
        const result = validateSection(section.schema, value, key);
        errors.push(...result.errors);
        warnings.push(...result.warnings);
        effective[key] = result.value;
      } else {
        effective[key] = value;
      }
    }
    for (const [key, section] of this.sections) {
      if (key in effective || !section.enabled || !section.schema) continue;
      effective[key] = validateSection(section.schema, {}, key).value;
    }
    if (errors.length) throw new ConfigError(`${this.file}: ${errors.join('; ')}`);
    return { effective, warnings };
  }

  settings(): KernelSettings {
    return this.current as unknown as KernelSettings;
  }

  section(name: string): Record<string, unknown> {
    return (this.current[name] as Record<string, unknown>) ?? {};
  }

  effective(): Record<string, unknown> {
    return structuredClone(this.current);
  }

  redacted(): Record<string, unknown> {
    return redactSecrets(this.current);
  }

  schema(): JsonSchema {
    const properties: Record<string, unknown> = { ...kernelSettingsSchema.properties };
    for (const [key, section] of this.sections) {
      properties[key] = section.schema ?? { type: 'object', description: `section of module '${section.module}'` };
    }
    return {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Talon config.toml',
      type: 'object',
      properties,
      additionalProperties: true,
    };
  }

  /** Validates a change of one dotted key; returns what to commit. Throws ConfigError. */
  prepareSet(path: string): { segments: string[] } & { check(value: unknown): Validated } {
    const segments = path.split('.').map((s) => s.trim());
    if (!path || segments.some((s) => !s)) throw new ConfigError(`invalid key path '${path}'`);
    const top = segments[0];
    const known = top in kernelSettingsSchema.properties || this.sections.has(top) || top === 'rate_limit' || top === 'cors_origin';
    if (!known) throw new ConfigError(`unknown configuration key '${path}'`);
    return {
      segments,
      check: (value: unknown) => {
        const next = setIn(this.raw, segments, value);
        const result = this.validate(next);
        const unknownHere = result.warnings.find((w) => w.includes(`'${path}'`));
        if (unknownHere) throw new ConfigError(unknownHere.replace(' (ignored)', ''));
        return result;
      },
    };
  }

  commitSet(segments: string[], value: unknown, validated: Validated): unknown {
    const previous = getIn(this.current, segments);
    persistValue(this.file, segments, value);
    this.raw = setIn(this.raw, segments, value);
    this.current = validated.effective;
    return previous;
  }

  /** Reads the file again without adopting it. Throws ConfigError when invalid. */
  readAgain(): { raw: Record<string, unknown>; validated: Validated } {
    const raw = parseToml(readFileSync(this.file, 'utf8'), this.file);
    return { raw, validated: this.validate(raw) };
  }

  adopt(raw: Record<string, unknown>, validated: Validated): string[] {
    const before = this.current;
    this.raw = raw;
    this.current = validated.effective;
    const keys = new Set([...Object.keys(before), ...Object.keys(this.current)]);
    return [...keys].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(this.current[k]));
  }

  static needsRestart(path: string): boolean {
    return RESTART_KEYS.has(path.split('.')[0]);
  }
}

export function getIn(obj: Record<string, unknown>, path: string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

export { ConfigError };
