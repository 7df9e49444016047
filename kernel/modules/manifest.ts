import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import type { FromSchema } from 'json-schema-to-ts';
import type { ValidateFunction } from 'ajv';
import { configAjv } from '../config/validate.ts';

export const manifestSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+' },
    description: { type: 'string', default: '' },
    depends: { type: 'array', items: { type: 'string' }, default: [] },
    optional_depends: { type: 'array', items: { type: 'string' }, default: [] },
    config_section: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' },
    /** Further top-level tables the module reads (reference spellings): known keys, not warned about. */
    extra_config_sections: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' }, default: [] },
    enabled: { type: 'boolean', default: true, description: 'enabled by default' },
    entry: { type: 'string', default: 'index.ts' },
  },
  required: ['name', 'version'],
  additionalProperties: false,
} as const;

export type ManifestData = FromSchema<typeof manifestSchema, { keepDefaultedPropertiesOptional: false }>;

export interface Manifest extends ManifestData {
  dir: string;
  thirdParty: boolean;
}

let compiled: ValidateFunction | undefined;
const validate = (data: unknown): boolean => {
  compiled ??= configAjv().compile(manifestSchema);
  const ok = compiled(data);
  validate.errors = compiled.errors;
  return ok;
};
validate.errors = undefined as ValidateFunction['errors'];

export function readManifest(dir: string, thirdParty: boolean): Manifest {
  const file = path.join(dir, 'module.toml');
  let data: unknown;
  try {
    data = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!validate(data)) {
    const problems = (validate.errors ?? []).map(
      (e) => `${e.instancePath || 'manifest'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` '${e.params.additionalProperty}'` : ''}`,
    );
    throw new Error(`${file}: ${problems.join('; ')}`);
  }
  return { ...(data as ManifestData), dir, thirdParty };
}

/** Folders holding a module.toml under root (a module's own subfolders are not searched). */
export function findModuleDirs(root: string): string[] {
  if (!existsSync(root)) return [];
  if (existsSync(path.join(root, 'module.toml'))) return [root];
  const found: string[] = [];
  for (const name of readdirSync(root).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const child = path.join(root, name);
    if (statSync(child).isDirectory()) found.push(...findModuleDirs(child));
  }
  return found;
}
