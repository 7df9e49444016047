import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { findModuleDirs, readManifest, type Manifest } from './manifest.ts';

export interface ModuleRoot {
  dir: string;
  thirdParty: boolean;
}

/** `modules/` next to `kernel/`. */
function builtinModulesDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../modules');
}

/** The built-in modules folder and every `module_paths` entry (relative to the config file's folder). */
export function moduleRoots(modulesDir: string | undefined, modulePaths: readonly string[], configDir: string): ModuleRoot[] {
  return [
    { dir: modulesDir ?? builtinModulesDir(), thirdParty: false },
    ...modulePaths.map((p) => ({ dir: path.resolve(configDir, p.replace(/^~(?=$|\/)/, process.env.HOME ?? '~')), thirdParty: true })),
  ];
}

/** Every readable module.toml under the roots; a broken manifest or a taken name is logged and skipped. */
export function discoverManifests(roots: readonly ModuleRoot[], log: Logger): Manifest[] {
  const manifests: Manifest[] = [];
  for (const root of roots) {
    for (const dir of findModuleDirs(root.dir)) {
      try {
        const manifest = readManifest(dir, root.thirdParty);
        const clash = manifests.find((m) => m.name === manifest.name);
        if (clash) log.error(`module '${manifest.name}' in ${dir} ignored: the name is taken by ${clash.dir}`);
        else manifests.push(manifest);
      } catch (err) {
        log.error(`module in ${dir} ignored: ${(err as Error).message}`);
      }
    }
  }
  return manifests;
}

/** The named modules plus everything they depend on. */
export function withDependencies(names: readonly string[], manifests: readonly Manifest[]): Set<string> {
  const byName = new Map(manifests.map((m) => [m.name, m]));
  const out = new Set<string>();
  const add = (n: string) => {
    if (out.has(n)) return;
    out.add(n);
    for (const d of byName.get(n)?.depends ?? []) add(d);
  };
  names.forEach(add);
  return out;
}
