import { createRequire, Module } from 'node:module';
import path from 'node:path';
import { build, type BuildFailure } from 'esbuild';

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
}

export async function bundleModule(entry: string): Promise<Bundle> {
  try {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      write: false,
      packages: 'external',
      sourcemap: 'inline',
      sourcesContent: false,
      metafile: true,
      logLevel: 'silent',
      absWorkingDir: path.dirname(entry),
    });
    const code = result.outputFiles[0].text;
    const inputs = Object.keys(result.metafile.inputs).map((p) => path.resolve(path.dirname(entry), p));
    return { code, inputs };
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

/** Evaluates a bundle; `shared` maps package names to instances the kernel already holds (the SDK). */
export function evaluateBundle(bundle: Bundle, filename: string, shared: Record<string, unknown>): unknown {
  const mod = new Module(filename) as Module & { _compile(code: string, filename: string): void };
  mod.filename = filename;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(filename));
  const requireFrom = createRequire(filename);
  mod.require = ((id: string) => (id in shared ? shared[id] : requireFrom(id))) as NodeJS.Require;
  mod._compile(bundle.code, filename);
  return mod.exports;
}
