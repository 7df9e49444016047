import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleModule, evaluateBundle } from './loader/bundle.ts';
import type * as KernelExports from './kernel.ts';

// Stack traces of bundled code (the kernel's and the modules') point at the original TypeScript files.
process.setSourceMapsEnabled(true);

// The kernel is loaded the way modules are: one cached CommonJS bundle. Its packages are then required
// directly instead of each import passing through the TypeScript loader's hooks (a tenth of start-up).
const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(here, 'kernel.ts');
const bundled = await bundleModule(entry);
const { Kernel, BootAbort } = evaluateBundle(bundled, entry, () => undefined) as typeof KernelExports;

const dev = process.argv.includes('--dev');
const kernel = new Kernel({ dev, modulesDir: path.resolve(here, '../modules'), onShutdown: () => process.exit(0) });

let signals = 0;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (++signals > 1) process.exit(1);
    void kernel.stop(signal).then(() => process.exit(0));
  });
}

try {
  await kernel.start();
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  if ((err as Error).name === 'ConfigError') {
    process.stderr.write(`talon: configuration error: ${(err as Error).message}\n`);
    await kernel.stop('start failed').catch(() => undefined);
    process.exit(2);
  } else if (err instanceof BootAbort) {
    process.stderr.write(`talon: start-up stopped: ${err.message}\n`);
  } else if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    process.stderr.write(`talon: cannot listen on api_listen (${(err as Error).message}); choose another address in ${kernel.config.file}\n`);
  } else {
    process.stderr.write(`talon: failed to start: ${(err as Error).stack ?? err}\n`);
  }
  await kernel.stop('start failed').catch(() => undefined);
  process.exit(1);
}
