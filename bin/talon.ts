import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BootAbort, FENCED, Kernel } from '../kernel/kernel.ts';
import { runInit } from './init.ts';

/** The CLI: runs the daemon in the foreground. Exit codes: 2 = configuration error, 1 = any other start failure. */
async function main(): Promise<void> {
  // `talon init`: the first run against the running service (bin/init.ts), not a second service.
  if (process.argv[2] === 'init') {
    process.exitCode = await runInit(process.argv.slice(3));
    return;
  }
  // Source maps (stack traces of bundled code on the original TypeScript files) are Node's own switch: tsx turns them
  // on (`npm run dev`, the tests); `npm start` has them with NODE_OPTIONS=--enable-source-maps. Off, start-up does not
  // read every module bundle's map (about a tenth of its time, and 4 MB). See docs/decisions.md.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const kernel = new Kernel({
    dev: process.argv.includes('--dev'),
    listen: option('--listen'),
    modulesDir: path.resolve(here, '../modules'),
    onShutdown: (reason) => process.exit(reason === FENCED ? 1 : 0),
  });
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
    process.stderr.write(`talon: ${explain(err, kernel.config.file, kernel.apiListen())}\n`);
    await kernel.stop('start failed').catch(() => undefined);
    process.exit((err as Error).name === 'ConfigError' ? 2 : 1);
  }
}

/** `--name value` or `--name=value`. */
function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (at < 0) return undefined;
  return args[at].includes('=') ? args[at].slice(name.length + 1) : args[at + 1];
}

function explain(err: unknown, configFile: string, listen: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  if ((err as Error).name === 'ConfigError') return `configuration error: ${(err as Error).message}`;
  if (err instanceof BootAbort) return `start-up stopped: ${err.message}`;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return `cannot listen on ${listen} (${(err as Error).message}); choose another address in ${configFile}, TALON_API_LISTEN or --listen`;
  }
  return `failed to start: ${(err as Error).stack ?? err}`;
}

void main();
