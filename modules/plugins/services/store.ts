/**
 * The installed plugins: one folder each under the plugins folder, read at start and on reload. Loading checks
 * what can make a plugin unsafe or broken before any hook runs: the manifest, each hook file (present, inside the
 * folder, executable for native), the [integrity] hashes and the signature when there is one. A plugin that fails
 * a check is listed with status 'error' and its hooks never run. A `.disabled` file turns a plugin off.
 */
import { accessSync, constants, existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { isInside } from '@talon/module-sdk';
import type { HookName } from '@talon/plugins';
import type { ManifestSigner } from '@talon/manifest-signing';
import { ManifestError, parseManifest, type PluginManifest } from './manifest.ts';
import { RUNTIME_SPECS, runtimeForFile, runtimeOf, which, type Runtime } from './runtimes.ts';
import { checkSignature, sha256 } from './signing.ts';

export const DISABLED_MARKER = '.disabled';

export interface LoadedPlugin {
  name: string;
  dir: string;
  manifest: PluginManifest | null;
  runtime: Runtime;
  /** The launcher program, or null for native hooks. */
  launcher: string | null;
  enabled: boolean;
  status: 'loaded' | 'disabled' | 'error';
  error: string | null;
  hooksValid: boolean;
  hookProblems: string[];
  signed: boolean;
  /** Bumped at each load: persistent processes of an older generation are stale. */
  generation: number;
}

export interface StoreDeps {
  dir: () => string;
  launchers: () => Record<string, string>;
  signer: () => ManifestSigner | undefined;
}

export class PluginStore {
  private plugins = new Map<string, LoadedPlugin>();
  private generation = 0;

  constructor(private readonly deps: StoreDeps) {}

  list(): LoadedPlugin[] {
    return [...this.plugins.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): LoadedPlugin | undefined {
    return this.plugins.get(name);
  }

  /** Reads every plugin folder. */
  loadAll(): number {
    const next = new Map<string, LoadedPlugin>();
    const root = this.deps.dir();
    if (existsSync(root))
      for (const name of readdirSync(root).sort()) {
        const dir = path.join(root, name);
        if (!name.startsWith('.') && statSync(dir).isDirectory()) next.set(name, this.read(name, dir));
      }
    this.plugins = next;
    return next.size;
  }

  /** Reads one plugin folder again (install, enable, reload); undefined when the folder is gone. */
  loadOne(name: string): LoadedPlugin | undefined {
    const dir = path.join(this.deps.dir(), name);
    if (!existsSync(dir)) {
      this.plugins.delete(name);
      return undefined;
    }
    const plugin = this.read(name, dir);
    this.plugins.set(name, plugin);
    return plugin;
  }

  forget(name: string): void {
    this.plugins.delete(name);
  }

  private read(name: string, dir: string): LoadedPlugin {
    const base: LoadedPlugin = {
      name,
      dir,
      manifest: null,
      runtime: 'python',
      launcher: 'python3',
      enabled: !existsSync(path.join(dir, DISABLED_MARKER)),
      status: 'error',
      error: null,
      hooksValid: false,
      hookProblems: [],
      signed: false,
      generation: ++this.generation,
    };
    let manifest: PluginManifest;
    try {
      manifest = parseManifest(readFileSync(path.join(dir, 'plugin.toml'), 'utf8'));
    } catch (err) {
      const message = err instanceof ManifestError ? err.message : `plugin.toml cannot be read: ${(err as Error).message}`;
      return { ...base, error: message };
    }
    const named = this.runtimeFor(manifest);
    const runtime = named ?? 'python';
    const launcher = RUNTIME_SPECS[runtime].launcher === null ? null : (this.deps.launchers()[runtime] ?? RUNTIME_SPECS[runtime].launcher);
    const hookProblems = checkHooks(dir, manifest, runtime);
    const plugin = { ...base, manifest, runtime, launcher, hookProblems, hooksValid: hookProblems.length === 0 && Object.keys(manifest.hooks).length > 0 };
    const problem =
      (manifest.name !== name ? `plugin.toml names '${manifest.name}' but the folder is '${name}'` : undefined) ??
      (named === undefined ? `unknown runtime '${manifest.runtime}'` : undefined) ??
      hookProblems[0] ??
      integrityProblem(dir, manifest.integrity);
    const signature = problem ? { signed: existsSync(path.join(dir, 'SIGNATURE.json')) } : checkSignature(dir, manifest, this.deps.signer());
    const error = problem ?? signature.problem ?? null;
    return { ...plugin, signed: signature.signed, error, status: error ? 'error' : plugin.enabled ? 'loaded' : 'disabled' };
  }

  private runtimeFor(manifest: PluginManifest): Runtime | undefined {
    if (manifest.runtime) return runtimeOf(manifest.runtime);
    const first = Object.values(manifest.hooks)[0];
    return first ? runtimeForFile(first) : 'python';
  }
}

/** Each declared hook: a file inside the folder (no link out), executable when native. */
export function checkHooks(dir: string, manifest: PluginManifest, runtime: Runtime): string[] {
  const problems: string[] = manifest.unknownHooks.map(
    (h) => `[hooks] ${h} is not a hook (known: ingest, after_turn, bootstrap, assemble, compact, transform_tool_result, prepare_subagent, merge_subagent)`,
  );
  const realDir = realpathSync(dir);
  for (const [hook, rel] of Object.entries(manifest.hooks) as Array<[HookName, string]>) {
    const full = path.join(dir, rel);
    if (path.isAbsolute(rel) || !isInside(dir, full)) {
      problems.push(`hook ${hook}: '${rel}' is not inside the plugin folder`);
      continue;
    }
    if (!existsSync(full) || !statSync(full).isFile()) {
      problems.push(`hook ${hook}: '${rel}' does not exist`);
      continue;
    }
    if (!isInside(realDir, realpathSync(full))) {
      problems.push(`hook ${hook}: '${rel}' links outside the plugin folder`);
      continue;
    }
    if (runtime === 'native') {
      try {
        accessSync(full, constants.X_OK);
      } catch {
        problems.push(`hook ${hook}: '${rel}' is not executable (native hooks run as programs: chmod +x)`);
      }
    }
  }
  return problems;
}

function integrityProblem(dir: string, integrity: Record<string, string>): string | undefined {
  for (const [rel, expected] of Object.entries(integrity)) {
    const full = path.join(dir, rel);
    if (!isInside(dir, full) || !existsSync(full)) return `[integrity] names '${rel}', which does not exist`;
    const actual = sha256(readFileSync(full));
    if (actual !== expected) return `[integrity] mismatch for '${rel}': the file changed since it was hashed`;
  }
  return undefined;
}

/** Whether the launcher of a loaded plugin is on PATH (native: always). */
export const launcherPresent = (p: LoadedPlugin) => p.launcher === null || which(p.launcher) !== undefined;
