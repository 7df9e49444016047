import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { createRequire, Module } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type { BuildContext, BuildFailure, BuildOptions } from 'esbuild';

/** An error that says which file of the module it is about (file, or file:line:column), unless it already does. */
export const located = <E extends Error>(err: E, location: string | undefined): E & { location?: string } =>
  Object.assign(err, { location: (err as { location?: string }).location ?? location });

/** A compile error in module code, at `location` (file:line:col). */
export class ModuleBuildError extends Error {
  override name = 'ModuleBuildError';
  constructor(
    readonly location: string,
    text: string,
  ) {
    super(`${location}: ${text}`);
  }
}

/**
 * `inputs`: the module's own source files as they were built (the disk cache checks them); `contracts`: the
 * `@talon/<name>` it imports, each with where (file:line:column of the first import, to point an error at the module's
 * own line).
 */
export type Bundle = { code: string; inputs: Array<ReturnType<typeof stamp>>; contracts: Record<string, string> };

/** Incremental esbuild contexts by entry: a reload's rebuild reuses what did not change. */
export type Bundlers = Map<string, BuildContext<BuildOptions & { metafile: true; write: false }>>;

const CACHE_DIR = path.join(os.tmpdir(), `talon-bundles-${os.userInfo().uid}`);
const CACHE_VERSION = 5;
const cacheFile = (entry: string) =>
  path.join(CACHE_DIR, `${createHash('sha256').update(`${CACHE_VERSION}:${entry}`).digest('hex').slice(0, 24)}.json`);

function stamp(file: string) {
  const { size, mtimeMs } = statSync(file);
  return { file, size, mtimeMs };
}

/**
 * One CommonJS script of a module file; a reload (`incremental`) skips the disk cache, which cannot tell same-size
 * rewrites within one mtime tick apart.
 */
export async function bundleModule(entry: string, incremental?: Bundlers): Promise<Bundle> {
  if (!incremental) {
    try {
      const cached = JSON.parse(readFileSync(cacheFile(entry), 'utf8')) as Bundle;
      if (cached.inputs.every((input) => isDeepStrictEqual(stamp(input.file), input))) return cached;
    } catch {
      // no usable cache entry
    }
  }
  const bundle = await build(entry, incremental);
  // In the background (no reload or request waits for the disk); a cache that cannot be written only costs speed.
  remember(entry, bundle).catch(() => undefined);
  return bundle;
}

async function remember(entry: string, bundle: Bundle): Promise<void> {
  const tmp = `${cacheFile(entry)}.${randomUUID()}.tmp`;
  await mkdir(CACHE_DIR, { recursive: true });
  await writeFile(tmp, JSON.stringify(bundle));
  await rename(tmp, cacheFile(entry));
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
  if (contexts && !contexts.has(entry)) contexts.set(entry, await esbuild.context(options));
  const context = contexts?.get(entry);
  const result = await (context ? context.rebuild() : esbuild.build(options)).catch((err: BuildFailure) => {
    const first = err.errors?.[0];
    if (!first) throw err;
    const at = first.location;
    throw new ModuleBuildError(
      at ? `${path.resolve(path.dirname(entry), at.file)}:${at.line}:${at.column + 1}` : entry,
      first.text,
    );
  });
  const contracts: Record<string, string> = {};
  for (const [input, { imports }] of Object.entries(result.metafile.inputs)) {
    for (const { path: spec } of imports) {
      const name =
        spec.startsWith('@talon/') && spec !== '@talon/module-sdk' ? spec.slice('@talon/'.length) : undefined;
      if (name && !contracts[name]) contracts[name] = importSite(path.resolve(path.dirname(entry), input), spec);
    }
  }
  return {
    code: result.outputFiles[0].text,
    inputs: Object.keys(result.metafile.inputs).map((input) => stamp(path.resolve(path.dirname(entry), input))),
    contracts,
  };
}

/** file:line:column of the first place the file names `spec` in quotes (its import), or the file. */
function importSite(file: string, spec: string): string {
  const text = readFileSync(file, 'utf8');
  const found = [text.indexOf(`'${spec}'`), text.indexOf(`"${spec}"`)].filter((i) => i >= 0);
  if (!found.length) return file;
  const at = Math.min(...found);
  const lines = text.slice(0, at).split('\n');
  return `${file}:${lines.length}:${lines.at(-1)!.length + 1}`;
}

/** Bare imports are looked up beside the module first (its own node_modules), then among the service's. */
const serviceDir = path.dirname(fileURLToPath(import.meta.url));

/** Compiles a bundle as a fresh, uncached CommonJS module; `provided`: what the kernel answers (the SDK, contracts). */
export function evaluateBundle(bundle: Bundle, filename: string, provided: ReadonlyMap<string, unknown>): unknown {
  const mod = new Module(filename) as Module & { _compile(code: string, filename: string): void };
  mod.filename = filename;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    path.dirname(filename),
  );
  const own = createRequire(filename);
  const lookup = { paths: [path.dirname(filename), serviceDir] };
  mod.require = ((id: string) => provided.get(id) ?? own(own.resolve(id, lookup))) as NodeJS.Require;
  mod._compile(bundle.code, filename);
  return mod.exports;
}
