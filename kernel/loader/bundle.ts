import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { BuildFailure } from 'esbuild';

/**
 * Module code is bundled to one CommonJS script (npm packages stay external
 * and shared) and compiled as a fresh, unregistered CJS module. Unlike ESM
 * `import()`, nothing caches it: a hot reload gets the changed files, and the
 * previous copy is garbage-collected once nothing refers to it.
 */
export class ModuleBuildError extends Error {
  constructor(
    message: string,
    readonly location?: string,
  ) {
    super(message);
    this.name = 'ModuleBuildError';
  }
}

export interface Bundle {
  code: string;
  /** Absolute paths of the module's own source files in the bundle. */
  inputs: string[];
  /** The other modules' contracts it imports (`@talon/<name>`). */
  contracts: string[];
}

/**
 * Bundles are cached on disk, keyed by the entry and validated by the size and
 * mtime of every input file, so a warm start needs no esbuild at all.
 */
const CACHE_DIR = path.join(os.tmpdir(), `talon-bundles-${os.userInfo().uid}`);
const CACHE_VERSION = 3;

interface CacheRecord {
  version: number;
  inputs: Array<{ file: string; size: number; mtimeMs: number }>;
  code: string;
  contracts: string[];
}

function cacheFile(entry: string): string {
  return path.join(CACHE_DIR, `${createHash('sha256').update(entry).digest('hex').slice(0, 24)}.json`);
}

function fromCache(entry: string): Bundle | undefined {
  try {
    const record = JSON.parse(readFileSync(cacheFile(entry), 'utf8')) as CacheRecord;
    if (record.version !== CACHE_VERSION) return undefined;
    for (const input of record.inputs) {
      const st = statSync(input.file);
      if (st.size !== input.size || st.mtimeMs !== input.mtimeMs) return undefined;
    }
    return { code: record.code, inputs: record.inputs.map((i) => i.file), contracts: record.contracts };
  } catch {
    return undefined;
  }
}

function toCache(entry: string, bundle: Bundle): void {
  try {
    mkdirSync(CACHE_DIR, { recursive: true });
    const inputs = bundle.inputs.map((file) => {
      const st = statSync(file);
      return { file, size: st.size, mtimeMs: st.mtimeMs };
    });
    const target = cacheFile(entry);
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: CACHE_VERSION, inputs, code: bundle.code, contracts: bundle.contracts } satisfies CacheRecord));
    renameSync(tmp, target);
  } catch {
    // a cache that cannot be written only costs speed
  }
}

export async function bundleModule(entry: string, options: { cache?: boolean } = {}): Promise<Bundle> {
  if (options.cache !== false) {
    const cached = fromCache(entry);
    if (cached) return cached;
  }
  const bundle = await build(entry);
  toCache(entry, bundle);
  return bundle;
}

async function build(entry: string): Promise<Bundle> {
  // Loaded on demand: a start from a warm cache never pays for esbuild.
  const esbuild = await import('esbuild');
  try {
    const result = await esbuild.build({
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
    });
    const code = result.outputFiles[0].text;
    const inputs = Object.keys(result.metafile.inputs).map((p) => path.resolve(path.dirname(entry), p));
    const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
    const contracts = [...new Set(imports.filter((p) => p.startsWith('@talon/') && p !== '@talon/module-sdk').map((p) => p.slice('@talon/'.length)))];
    return { code, inputs, contracts };
  } catch (err) {
    const failure = err as BuildFailure;
    const first = failure.errors?.[0];
    if (first) {
      const loc = first.location ? `${path.resolve(path.dirname(entry), first.location.file)}:${first.location.line}:${first.location.column + 1}` : entry;
      throw new ModuleBuildError(`${loc}: ${first.text}`, loc);
    }
    throw err;
  }
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
  const requireFrom = createRequire(filename);
  mod.require = ((id: string) => special(id) ?? requireOwnThenService(requireFrom, id)) as NodeJS.Require;
  mod._compile(bundle.code, filename);
  return mod.exports;
}

function requireOwnThenService(own: NodeJS.Require, id: string): unknown {
  try {
    return own(id);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND' || id.startsWith('.') || path.isAbsolute(id)) throw err;
    return serviceRequire(id);
  }
}
