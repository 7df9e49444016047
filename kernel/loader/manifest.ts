import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import type { FromSchema } from 'json-schema-to-ts';
import { configAjv } from '../config/validate.ts';

const NAME = '^[a-z][a-z0-9-]*$';
const KEY = '^[a-z][a-z0-9_]*$';
const names = { type: 'array', items: { type: 'string', pattern: NAME }, default: [] } as const;

export const manifestSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: NAME },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+' },
    description: { type: 'string', default: '' },
    /** Semver range of @talon/module-sdk the module is written for. */
    sdk: { type: 'string', default: '*' },
    depends: names,
    optional_depends: names,
    /** Services of other modules this one uses ('module.service'), or whole modules by name. */
    consumes: { type: 'array', items: { type: 'string' }, default: [] },
    /** Ids of the services this module offers ('<name>.<service>'). */
    provides: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9-]*\\.[A-Za-z0-9_.-]+$' }, default: [] },
    config_section: { type: 'string', pattern: KEY },
    /** Top-level config keys (or tables) the module owns; their schemas come from the module's code. */
    config_keys: { type: 'array', items: { type: 'string', pattern: KEY }, default: [] },
    /** A security module: never fails open (see docs/modules.md). */
    critical: { type: 'boolean', default: false },
    /** Config keys whose value means this critical module's protection is configured. */
    protects: { type: 'array', items: { type: 'string', pattern: KEY }, default: [] },
    enabled: { type: 'boolean', default: true, description: 'enabled by default' },
    entry: { type: 'string', default: 'index.ts' },
    /** The public contract other modules import as @talon/<name>. */
    contract: { type: 'string', default: 'api.ts' },
  },
  required: ['name', 'version'],
  additionalProperties: false,
} as const;

export type ManifestData = FromSchema<typeof manifestSchema, { keepDefaultedPropertiesOptional: false }>;

export interface Manifest extends ManifestData {
  dir: string;
  thirdParty: boolean;
}

/** The module that owns a service or hook catalogue id ('agents.registry' → 'agents'). */
export const ownerOf = (id: string): string => id.slice(0, id.indexOf('.'));

/** Every module whose services, hooks and contract this one may use: its dependencies and what it consumes. */
export function connections(m: Manifest): Set<string> {
  return new Set([...m.depends, ...m.optional_depends, ...m.consumes.map((c) => (c.includes('.') ? ownerOf(c) : c))]);
}

/** Whether the manifest declares the use of this service (or hook catalogue) id. */
export function declares(m: Manifest, id: string): boolean {
  const owner = ownerOf(id);
  return owner === m.name || m.depends.includes(owner) || m.optional_depends.includes(owner) || m.consumes.includes(owner) || m.consumes.includes(id);
}

export function readManifest(dir: string, thirdParty: boolean): Manifest {
  const file = path.join(dir, 'module.toml');
  let data: unknown;
  try {
    data = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  const validate = configAjv().getSchema('talon:manifest') ?? configAjv().addSchema(manifestSchema, 'talon:manifest').getSchema('talon:manifest')!;
  if (!validate(data)) {
    const problems = (validate.errors ?? []).map(
      (e) => `${e.instancePath || 'manifest'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` '${e.params.additionalProperty}'` : ''}`,
    );
    throw new Error(`${file}: ${problems.join('; ')}`);
  }
  const manifest = { ...(data as ManifestData), dir, thirdParty };
  const foreign = manifest.provides.find((id) => !id.startsWith(`${manifest.name}.`));
  if (foreign) throw new Error(`${file}: provides '${foreign}', but a module's services are named '${manifest.name}.<service>'`);
  return manifest;
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
