import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { parse } from 'smol-toml';
import type { FromSchema } from 'json-schema-to-ts';
import { configAjv } from '../config/validate.ts';

const NAME = '^[a-z][a-z0-9-]*$';
const KEY = '^[a-z][a-z0-9_]*$';
const names = { type: 'array', items: { type: 'string', pattern: NAME }, default: [] } as const;
const keys = { type: 'array', items: { type: 'string', pattern: KEY }, default: [] } as const;

const manifestSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: NAME },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+' },
    description: { type: 'string', default: '' },
    sdk: { type: 'string', default: '*', description: 'semver range of @talon/module-sdk the module is written for' },
    depends: names,
    optional_depends: names,
    consumes: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: "other modules' services ('module.service') or whole modules",
    },
    provides: {
      type: 'array',
      items: { type: 'string', pattern: '^[a-z][a-z0-9-]*\\.[A-Za-z0-9_.-]+$' },
      default: [],
      description: "'<name>.<service>'",
    },
    config_section: { type: 'string', pattern: KEY },
    config_keys: { ...keys, description: 'top-level config keys the module owns (their schemas are in its code)' },
    all_events: {
      type: 'boolean',
      default: false,
      description: "subscribes to every module's events ('*'): an observer that records or forwards them",
    },
    critical: { type: 'boolean', default: false, description: 'a security module: never fails open' },
    protects: { ...keys, description: "config keys whose value means this critical module's protection is configured" },
    enabled: { type: 'boolean', default: true, description: 'enabled by default' },
    contributes: {
      type: 'object',
      propertyNames: { pattern: NAME },
      additionalProperties: { type: 'object' },
      default: {},
      description:
        "declarations for another module's extension point, by its name ([contributes.<owner>]); " +
        'the owner reads and checks them',
    },
    entry: { type: 'string', default: 'index.ts' },
    contract: { type: 'string', default: 'api.ts', description: 'the public contract others import as @talon/<name>' },
  },
  required: ['name', 'version'],
  additionalProperties: false,
} as const;

export interface Manifest extends FromSchema<typeof manifestSchema, { keepDefaultedPropertiesOptional: false }> {
  dir: string;
  thirdParty: boolean;
}

/** The module a service, hook catalogue or `consumes` entry belongs to ('owner.service' → 'owner'). */
export const ownerOf = (id: string): string => id.split('.')[0];

const declared = (m: Manifest): string[] => [...m.depends, ...m.optional_depends, ...m.consumes];

/** Every module whose services, hooks and contract this one may use: its dependencies and what it consumes. */
export const connections = (m: Manifest): Set<string> => new Set(declared(m).map(ownerOf));

/**
 * The modules this one loads after: its connections, except owners it declares only for their events
 * (`consumes = ["<owner>.events"]`). Every subscription is in place before any module starts, so an observer
 * needs no order; ordering it after what it observes would also stop it first, before the last events it should see.
 */
export function orderingLinks(m: Manifest): Set<string> {
  const links = [...m.depends, ...m.optional_depends, ...m.consumes.filter((c) => !c.endsWith('.events'))];
  return new Set(links.map(ownerOf));
}

/**
 * Whether the manifest declares the use of this service (or hook catalogue) id: its whole module, or the id in
 * `consumes`.
 */
export function declares(m: Manifest, id: string): boolean {
  return ownerOf(id) === m.name || declared(m).includes(ownerOf(id)) || m.consumes.includes(id);
}

/** The end of an undeclared-use error: what to add where. */
export const howToDeclare = (m: Manifest, owner: string) =>
  `add '${owner}' to depends, optional_depends or consumes in ${path.join(m.dir, 'module.toml')}`;

export function readManifest(dir: string, thirdParty: boolean): Manifest {
  const file = path.join(dir, 'module.toml');
  let data: unknown;
  try {
    data = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  // Ajv keeps the validator of a schema object: compiled once.
  const validate = configAjv().compile(manifestSchema);
  if (!validate(data)) {
    const problems = validate.errors!.map((e) => {
      const extra = 'additionalProperty' in e.params ? ` '${e.params.additionalProperty}'` : '';
      return `${e.instancePath || 'manifest'} ${e.message}${extra}`;
    });
    throw new Error(`${file}: ${problems.join('; ')}`);
  }
  const manifest = { ...(data as Omit<Manifest, 'dir' | 'thirdParty'>), dir, thirdParty };
  const foreign = manifest.provides.find((id) => !id.startsWith(`${manifest.name}.`));
  if (foreign)
    throw new Error(`${file}: provides '${foreign}', but a module's services are named '${manifest.name}.<service>'`);
  return manifest;
}

export type ModuleRoot = { dir: string; thirdParty: boolean };

/**
 * `modules/` beside `kernel/` (unless given), then every `module_paths` entry, relative to the config file's
 * folder.
 */
export function moduleRoots(
  modulesDir: string | undefined,
  modulePaths: readonly string[],
  configDir: string,
): ModuleRoot[] {
  return [
    { dir: modulesDir ?? fileURLToPath(new URL('../../modules', import.meta.url)), thirdParty: false },
    ...modulePaths.map((p) => ({
      dir: path.resolve(configDir, p.replace(/^~(?=$|\/)/, process.env.HOME ?? '~')),
      thirdParty: true,
    })),
  ];
}

/** Folders holding a module.toml under dir (a module's own subfolders are not searched). */
function moduleDirs(dir: string): string[] {
  if (existsSync(path.join(dir, 'module.toml'))) return [dir];
  const names = existsSync(dir) ? readdirSync(dir).sort() : [];
  const children = names
    .filter((name) => name !== 'node_modules' && !name.startsWith('.'))
    .map((name) => path.join(dir, name));
  return children.filter((child) => statSync(child).isDirectory()).flatMap(moduleDirs);
}

/**
 * Every readable module.toml under the roots, read before any module code; a broken one or a name `known` or taken
 * is logged and skipped.
 */
export function discoverManifests(
  roots: readonly ModuleRoot[],
  log: Logger,
  known: (name: string) => Manifest | undefined = () => undefined,
): Manifest[] {
  const found = new Map<string, Manifest>();
  for (const root of roots) {
    for (const dir of moduleDirs(root.dir)) {
      try {
        const manifest = readManifest(dir, root.thirdParty);
        const taken = found.get(manifest.name) ?? known(manifest.name);
        if (taken) log.error(`module '${manifest.name}' in ${dir} ignored: the name is taken by ${taken.dir}`);
        else found.set(manifest.name, manifest);
      } catch (err) {
        log.error(`module in ${dir} ignored: ${(err as Error).message}`);
      }
    }
  }
  return [...found.values()];
}
