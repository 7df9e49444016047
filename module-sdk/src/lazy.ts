import { createRequire } from 'node:module';

/** The service's own resolution, the fallback for a package a module does not carry itself. */
const serviceRequire = createRequire(import.meta.url);

/**
 * A package loaded on its first use instead of at start-up, for packages only some requests need
 * (a protocol client, an archive format). `from` is the caller's `import.meta.url`: the package is
 * found beside the module first, then among the service's packages, as a static import would be.
 * Types come from a type-only import:
 *
 *   import type * as Yaml from 'yaml';
 *   const yaml = lazyRequire<typeof Yaml>(import.meta.url, 'yaml');
 *   yaml().parse(text);
 */
export function lazyRequire<T>(from: string, specifier: string): () => T {
  return lazy(() => load(from, specifier) as T);
}

/**
 * A value made on its first use and kept (a compiled validator, a dynamic import's promise), instead of a module-level
 * `let` assigned with `??=`: the state lives in the returned function.
 */
export function lazy<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

function load(from: string, specifier: string): unknown {
  try {
    return createRequire(from)(specifier);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    return serviceRequire(specifier);
  }
}
