import type { ConfigAlias, JsonSchema, KernelSettings } from '@talon/module-sdk';
import { kernelSettingsSchema } from '@talon/module-sdk';
import { ConfigError } from './errors.ts';
import { applyAliases, readConfigFile } from './file.ts';
import { redactSecrets } from '@talon/module-sdk';
import { validateSection } from './validate.ts';
import { fillable, fillDefaults } from './defaults.ts';

/** A top-level key owned by a module: its section (a table) or a key it claims. */
interface Claim {
  module: string;
  enabled: boolean;
  table: boolean;
  schema?: JsonSchema;
}

export interface Validated {
  effective: Record<string, unknown>;
  warnings: string[];
}

const KERNEL_KEYS = Object.keys(kernelSettingsSchema.properties);
/** Kernel keys whose change only takes effect after a restart. */
const RESTART_KEYS = new Set(['api_listen', 'modules', 'module_paths', 'startup', 'max_request_body_bytes']);
const KERNEL_ALIASES: ConfigAlias[] = [{ from: 'listen_addr', to: 'api_listen' }];

/**
 * The configuration: the file's data, the effective values (defaults filled
 * in), and the keys that modules own. Changes are validated in full first, so
 * the running configuration is never half-applied.
 */
export class ConfigStore {
  private raw: Record<string, unknown> = {};
  private current: Record<string, unknown> = {};
  private readonly claims = new Map<string, Claim>();
  private readonly aliases = new Map<string, readonly ConfigAlias[]>();
  private readonly views = new Map<string, Record<string, unknown>>();

  constructor(readonly file: string) {}

  /** Reads the file (a missing one is empty). Throws ConfigError naming the key and the problem. */
  load(): void {
    const raw = readConfigFile(this.file);
    this.adopt(raw, this.validate(raw));
  }

  /** Declares a key a module owns (before its code is loaded the schema is unknown). */
  claim(key: string, claim: Claim): void {
    const other = this.claims.get(key);
    if (other && other.module !== claim.module) throw new ConfigError(`configuration key '${key}' is claimed by both '${other.module}' and '${claim.module}'`);
    if (KERNEL_KEYS.includes(key)) throw new ConfigError(`module '${claim.module}' claims '${key}', a key of the kernel`);
    this.claims.set(key, claim);
  }

  setAliases(module: string, aliases: readonly ConfigAlias[]): void {
    this.aliases.set(module, aliases);
  }

  /** Re-validates with the current schemas and adopts the result. */
  revalidate(): string[] {
    const result = this.validate(this.raw);
    this.adopt(this.raw, result);
    return result.warnings;
  }

  validate(raw: Record<string, unknown>): Validated {
    const warnings: string[] = [];
    const errors: string[] = [];
    const data = applyAliases(raw, [...KERNEL_ALIASES, ...[...this.aliases.values()].flat()], warnings);
    const kernel = validateSection(kernelSettingsSchema, pick(data, KERNEL_KEYS), '');
    errors.push(...kernel.errors);
    warnings.push(...kernel.warnings);
    const effective: Record<string, unknown> = { ...kernel.value };
    for (const [key, value] of Object.entries(data)) {
      if (KERNEL_KEYS.includes(key)) continue;
      const claim = this.claims.get(key);
      if (!claim) warnings.push(`unknown configuration key '${key}' (ignored)`);
      if (!claim?.enabled || !claim.schema) {
        effective[key] = value;
        continue;
      }
      const result = this.check(key, claim, value);
      errors.push(...result.errors);
      warnings.push(...result.warnings);
      effective[key] = result.value;
    }
    for (const [key, claim] of this.claims) {
      if (key in effective || !claim.enabled || !claim.schema) continue;
      const defaults = this.defaults(key, claim);
      if (defaults !== undefined) effective[key] = defaults;
    }
    if (errors.length) throw new ConfigError(`${this.file}: ${errors.join('; ')}`);
    return { effective, warnings: warnings.map((w) => this.hint(w)) };
  }

  adopt(raw: Record<string, unknown>, validated: Validated): string[] {
    const before = this.current;
    this.raw = raw;
    this.current = validated.effective;
    this.views.clear();
    const keys = new Set([...Object.keys(before), ...Object.keys(this.current)]);
    return [...keys].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(this.current[k]));
  }

  settings(): KernelSettings {
    return this.current as unknown as KernelSettings;
  }

  /** A module's configuration: its section's keys plus the top-level keys it claims (one object per adoption). */
  moduleConfig(module: string, section: string | undefined, keys: readonly string[]): Record<string, unknown> {
    let view = this.views.get(module);
    if (!view) {
      view = { ...((section && (this.current[section] as Record<string, unknown>)) || {}) };
      for (const key of keys) if (key in this.current) view[key] = this.current[key];
      this.views.set(module, view);
    }
    return view;
  }

  rawData(): Record<string, unknown> {
    return structuredClone(this.raw);
  }

  redacted(): Record<string, unknown> {
    return redactSecrets(this.current);
  }

  /** Set keys, as written in the file (after aliases). */
  isSet(key: string): boolean {
    const value = applyAliases(this.raw, [...KERNEL_ALIASES, ...[...this.aliases.values()].flat()], [])[key];
    return value !== undefined && value !== '' && !(Array.isArray(value) && value.length === 0);
  }

  schema(): JsonSchema {
    const properties: Record<string, unknown> = { ...kernelSettingsSchema.properties };
    for (const [key, claim] of this.claims) properties[key] = { ...(claim.schema ?? { description: 'not loaded' }), 'x-module': claim.module };
    return {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Talon config.toml',
      type: 'object',
      properties,
      additionalProperties: true,
    };
  }

  static needsRestart(path: string): boolean {
    return RESTART_KEYS.has(path.split('.')[0]);
  }

  /** The value of a key the file does not set: its defaults (without compiling a validator where none is needed). */
  private defaults(key: string, claim: Claim): unknown {
    const schema = claim.table ? claim.schema! : { type: 'object', properties: { [key]: claim.schema } };
    if (!fillable(schema)) return this.check(key, claim, claim.table ? {} : undefined).value;
    const filled = fillDefaults(schema, {} as Record<string, unknown>);
    return claim.table ? filled : filled[key];
  }

  private check(key: string, claim: Claim, value: unknown) {
    if (claim.table) {
      if (value !== undefined && (!value || typeof value !== 'object' || Array.isArray(value))) {
        return { value, errors: [`invalid value for '${key}': must be a table ([${key}])`], warnings: [] };
      }
      return validateSection(claim.schema!, value, key);
    }
    const result = validateSection({ type: 'object', properties: { [key]: claim.schema } }, value === undefined ? {} : { [key]: value }, '');
    return { ...result, value: result.value[key] };
  }

  /** A key that is ours at the top level but written inside a table (TOML puts keys after [x] into x). */
  private hint(warning: string): string {
    const m = /^unknown configuration key '([a-z_]+)\.([a-z_]+)'/.exec(warning);
    if (!m || !(KERNEL_KEYS.includes(m[2]) || this.claims.has(m[2]))) return warning;
    return `${warning}: '${m[2]}' is a top-level key — move it above the first [table] in ${this.file}`;
  }
}

function pick(data: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([k]) => keys.includes(k)));
}

export { ConfigError };
