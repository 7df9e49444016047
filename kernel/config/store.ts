import { existsSync, readFileSync } from 'node:fs';
import { parse, TomlError } from 'smol-toml';
import { ConfigError, redactSecrets } from '@talon/module-sdk';
import { kernelSettingsSchema } from './settings.ts';
import type { ConfigAccess, ConfigAlias, JsonSchema, KernelHooks, KernelSettings } from '@talon/module-sdk';
import { applyAliases, isTable } from './aliases.ts';
import { explainTomlError } from './toml-error.ts';
import { fillable, fillDefaults, validateSection, type Problems } from './validate.ts';

/** A top-level key owned by a module: its section (a table) or a key it claims. */
type Claim = { module: string; enabled: boolean; table: boolean; schema?: JsonSchema };
type Data = Record<string, unknown>;

const KERNEL_KEYS = Object.keys(kernelSettingsSchema.properties);
/** Kernel keys whose change only takes effect after a restart. */
const RESTART_KEYS = new Set(['api_listen', 'module_paths', 'startup', 'max_request_body_bytes', 'database']);

/** What the kernel does around a change. */
export interface ConfigReactions {
  /** Refuses a candidate configuration by throwing ConfigError. */
  check(settings: KernelSettings, isSet: (key: string) => boolean): void;
  /**
   * Acts on an adopted change; `changed`: the top-level keys it changed. A throw takes the change back: the previous
   * data is adopted again.
   */
  applied(changed: readonly string[]): Promise<void>;
}
const KERNEL_ALIASES: ConfigAlias[] = [{ from: 'listen_addr', to: 'api_listen' }];

/**
 * The configuration, also as modules see it (ConfigAccess): a change is validated in full before it is adopted, never
 * half-applied.
 */
export class ConfigStore implements ConfigAccess {
  private data: Data = {};
  private aliased: Data = {};
  private current: Data = {};
  private readonly claims = new Map<string, Claim>();
  private readonly aliases = new Map<string, readonly ConfigAlias[]>();
  private readonly views = new Map<string, Data>();

  /** `reactions.applied` runs after every adopted change, before the config.changed hook. */
  constructor(
    readonly file: string,
    private readonly hooks: KernelHooks,
    private readonly reactions: ConfigReactions,
  ) {}

  /** Reads the file (a missing one is empty) and adopts it. A ConfigError names the line, or the key and problem. */
  load(): void {
    this.adopt(this.read());
  }

  /** Re-validates with the current schemas and adopts the result; returns the warnings. */
  revalidate(): string[] {
    return this.adopt(this.data).warnings;
  }

  /** Declares a key a module owns (before its code is loaded the schema is unknown). */
  claim(key: string, claim: Claim): void {
    const other = this.claims.get(key);
    if (other && other.module !== claim.module)
      throw new ConfigError(`configuration key '${key}' is claimed by both '${other.module}' and '${claim.module}'`);
    if (KERNEL_KEYS.includes(key))
      throw new ConfigError(`module '${claim.module}' claims '${key}', a key of the kernel`);
    this.claims.set(key, claim);
  }

  setAliases(module: string, aliases: readonly ConfigAlias[]): void {
    this.aliases.set(module, aliases);
  }

  read(): Data {
    if (!existsSync(this.file)) return {};
    const text = readFileSync(this.file, 'utf8');
    try {
      return parse(text);
    } catch (err) {
      const why = err instanceof TomlError ? explainTomlError(text, err) : (err as Error).message.split('\n')[0];
      throw new ConfigError(`${this.file}: ${why}`);
    }
  }

  /** Validates a candidate without adopting it; returns the warnings, throws ConfigError. */
  check(raw: Data): string[] {
    return this.validate(raw).warnings;
  }

  async apply(raw: Data, path: string): Promise<{ changed: string[]; restartRequired: boolean }> {
    const previous = this.at(path);
    const before = this.data;
    const { changed } = this.adopt(raw);
    try {
      await this.reactions.applied(changed);
    } catch (err) {
      this.adopt(before);
      throw err;
    }
    await this.hooks.config.changed.promise({ path, value: path ? this.at(path) : changed, previous });
    return { changed, restartRequired: changed.some((key) => RESTART_KEYS.has(key)) };
  }

  readonly settings = (): KernelSettings => this.current as unknown as KernelSettings;

  /** A module's configuration: its section's keys plus the top-level keys it claims (one object per adoption). */
  moduleConfig(module: string, section: string | undefined, keys: readonly string[]): Data {
    const known = this.views.get(module);
    if (known) return known;
    const view: Data = section ? { ...(this.current[section] as Data | undefined) } : {};
    for (const key of keys) if (key in this.current) view[key] = this.current[key];
    this.views.set(module, view);
    return view;
  }

  readonly raw = (): Data => structuredClone(this.data);
  readonly redacted = (): Data => redactSecrets(this.current);

  /** Whether the file sets a key (after aliases) to something other than empty. */
  readonly isSet = (key: string): boolean => isSetIn(this.aliased, key);

  schema(): JsonSchema {
    const properties: Data = { ...kernelSettingsSchema.properties };
    for (const [key, claim] of this.claims)
      properties[key] = { ...(claim.schema ?? { description: 'not loaded' }), 'x-module': claim.module };
    return {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Talon config.toml',
      type: 'object',
      properties,
      additionalProperties: true,
    };
  }

  /** Validates `data` in full, then makes it the running configuration. Returns the changed top-level keys. */
  private adopt(data: Data): { changed: string[]; warnings: string[] } {
    const { aliased, effective, warnings } = this.validate(data);
    const before = this.current;
    this.data = data;
    this.aliased = aliased;
    this.current = effective;
    this.views.clear();
    const keys = new Set([...Object.keys(before), ...Object.keys(effective)]);
    return { changed: [...keys].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(effective[k])), warnings };
  }

  private validate(raw: Data): { aliased: Data; effective: Data; warnings: string[] } {
    const problems: Problems = { errors: [], warnings: [] };
    const aliased = applyAliases(raw, [...KERNEL_ALIASES, ...[...this.aliases.values()].flat()], problems.warnings);
    const effective = validateSection(
      kernelSettingsSchema,
      Object.fromEntries(Object.entries(aliased).filter(([k]) => KERNEL_KEYS.includes(k))),
      problems,
    );
    // A claimed key is validated as a one-key object, so that problems name `key` or `key.sub`.
    for (const [key, value] of Object.entries(aliased)) {
      if (KERNEL_KEYS.includes(key)) continue;
      const claim = this.claims.get(key);
      if (!claim) problems.warnings.push(`unknown configuration key '${key}' (ignored)`);
      if (!claim?.enabled || !claim.schema) effective[key] = value;
      else if (claim.table && !isTable(value))
        problems.errors.push(`invalid value for '${key}': must be a table ([${key}])`);
      else effective[key] = validateSection(oneKey(key, claim.schema), { [key]: value }, problems)[key];
    }
    // A claimed key the file does not set gets its defaults, without compiling a validator where fillDefaults can.
    for (const [key, claim] of this.claims) {
      if (key in effective || !claim.enabled || !claim.schema) continue;
      const schema = oneKey(key, claim.schema);
      const data: Data = claim.table ? { [key]: {} } : {};
      const filled = fillable(schema)
        ? fillDefaults(schema, data)
        : validateSection(schema, data, { errors: [], warnings: [] });
      if (filled[key] !== undefined) effective[key] = filled[key];
    }
    if (problems.errors.length) throw new ConfigError(`${this.file}: ${problems.errors.join('; ')}`);
    this.reactions.check(effective as unknown as KernelSettings, (key) => isSetIn(aliased, key));
    return { aliased, effective, warnings: problems.warnings.map((w) => this.hint(w)) };
  }

  /** The redacted value at a dotted path ('' names none). */
  private at(path: string): unknown {
    if (!path) return undefined;
    let value: unknown = this.redacted();
    for (const key of path.split('.')) value = (value as Data | undefined)?.[key];
    return value;
  }

  /** A key that is ours at the top level but written inside a table (TOML puts keys after [x] into x). */
  private hint(warning: string): string {
    const m = /^unknown configuration key '([a-z_]+)\.([a-z_]+)'/.exec(warning);
    if (!m || !(KERNEL_KEYS.includes(m[2]) || this.claims.has(m[2]))) return warning;
    return `${warning}: '${m[2]}' is a top-level key — move it above the first [table] in ${this.file}`;
  }
}

const oneKey = (key: string, schema?: JsonSchema): JsonSchema => ({ type: 'object', properties: { [key]: schema } });

/** Whether the data sets a key to something other than empty. */
function isSetIn(data: Data, key: string): boolean {
  const value = data[key];
  return value !== undefined && value !== '' && !(Array.isArray(value) && value.length === 0);
}
