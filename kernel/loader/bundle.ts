import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { createRequire, Module } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { BuildContext, BuildFailure, BuildOptions, BuildResult } from 'esbuild';

/**
 * Module code is bundled to one CommonJS script (npm packages stay external and shared) and
 * compiled as a fresh, unregistered CJS module. Unlike ESM `import()`, nothing caches it: a hot
 * reload gets the changed files, and the previous copy is garbage-collected once nothing refers to it.
 */
export class ModuleBuildError extends Error {
  override name = 'ModuleBuildError';
  constructor(
    message: string,
    readonly location?: string,
  ) {
    super(message);
  }
}

export interface Bundle {
  code: string;
  /** The module's own source files, with the size and mtime they had (the disk cache checks them). */
  inputs: Array<{ file: string; size: number; mtimeMs: number }>;
  /** The other modules' contracts it imports (`@talon/<name>`). */
  contracts: string[];
}

// Bundles are cached on disk, keyed by the entry and checked against every input file: a warm start needs no esbuild.
const CACHE_DIR = path.join(os.tmpdir(), `talon-bundles-${os.userInfo().uid}`);
const CACHE_VERSION = 4;
let writes = 0;
const cacheFile = (entry: string) => path.join(CACHE_DIR, `${createHash('sha256').update(`${CACHE_VERSION}:${entry}`).digest('hex').slice(0, 24)}.json`);
const unchanged = (i: Bundle['inputs'][number]) => {
  const st = statSync(i.file, { throwIfNoEntry: false });
  return st?.size === i.size && st.mtimeMs === i.mtimeMs;
};

/** Incremental esbuild contexts by entry: a reload's rebuild reuses what did not change. */
export type Bundlers = Map<string, BuildContext<BuildOptions & { metafile: true; write: false }>>;

/**
 * With `incremental` contexts (a reload) the disk cache is skipped: a same-size rewrite within the mtime
 * resolution must not hit it.
 */
export async function bundleModule(entry: string, incremental?: Bundlers): Promise<Bundle> {
  if (!incremental) {
    try {
      const cached = JSON.parse(readFileSync(cacheFile(entry), 'utf8')) as Bundle;
      if (cached.inputs.every(unchanged)) return cached;
    } catch {
      // no usable cache entry
    }
  }
  const bundle = await build(entry, incremental);
  void remember(entry, bundle);
  return bundle;
}

/** Written in the background: a reload is not held up by the disk, nor are the requests served meanwhile. */
async function remember(entry: string, bundle: Bundle): Promise<void> {
  const tmp = `${cacheFile(entry)}.${process.pid}.${++writes}.tmp`;
  try {
    await mkdir(CACHE_DIR, { recursive: true });
    await writeFile(tmp, JSON.stringify(bundle));
    await rename(tmp, cacheFile(entry));
  } catch {
    // a cache that cannot be written only costs speed
  }
}

async function build(entry: string, contexts?: Bundlers): Promise<Bundle> {
  // Loaded on demand: a start from a warm cache never pays for esbuild.
  const esbuild = await import('esbuild');
  const options = {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    packages: 'external',
    // Named explicitly: a tsconfig `paths` entry for the SDK or a contract must never pull its source into the bundle.
    external: ['@talon/*'],
    // import() of a package becomes require(): cached and synchronous, never a trip through the ESM loader's hooks.
    supported: { 'dynamic-import': false },
    // CommonJS has no import.meta: give it the bundle's own file URL.
    banner: { js: 'var __talon_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    define: { 'import.meta.url': '__talon_import_meta_url' },
    sourcemap: 'inline',
    sourcesContent: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: path.dirname(entry),
  } satisfies BuildOptions;
  let result: BuildResult<typeof options>;
  try {
    if (!contexts) result = await esbuild.build(options);
    else {
      if (!contexts.has(entry)) contexts.set(entry, await esbuild.context(options));
      result = await contexts.get(entry)!.rebuild();
    }
  } catch (err) {
    const first = (err as BuildFailure).errors?.[0];
    if (!first) throw err;
    const loc = first.location ? `${path.resolve(path.dirname(entry), first.location.file)}:${first.location.line}:${first.location.column + 1}` : entry;
    throw new ModuleBuildError(`${loc}: ${first.text}`, loc);
  }
  const inputs = Object.keys(result.metafile.inputs).map((p) => {
    const file = path.resolve(path.dirname(entry), p);
    const st = statSync(file);
    return { file, size: st.size, mtimeMs: st.mtimeMs };
  });
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const contracts = [...new Set(imports.filter((p) => p.startsWith('@talon/') && p !== '@talon/module-sdk').map((p) => p.slice(7)))];
  return { code: result.outputFiles[0].text, inputs, contracts };
}

/** Packages are found beside the module first (its own node_modules), then among the service's. */
const serviceRequire = createRequire(import.meta.url);

/**
 * Evaluates a bundle. `special` answers the ids the kernel provides itself (the SDK instance, other
 * modules' contracts); it returns undefined for the rest.
 */
export function evaluateBundle(bundle: Bundle, filename: string, special: (id: string) => unknown): unknown {
  const mod = new Module(filename) as Module & { _compile(code: string, filename: string): void };
  mod.filename = filename;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(filename));
  const own = createRequire(filename);
  mod.require = ((id: string) => {
    const given = special(id);
    if (given !== undefined) return given;
    try {
      return own(id);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND' || id.startsWith('.') || path.isAbsolute(id)) throw err;
      return serviceRequire(id);
    }
  }) as NodeJS.Require;
  mod._compile(bundle.code, filename);
  return mod.exports;
}
