import { Kernel, ConfigError } from './kernel.ts';

const dev = process.argv.includes('--dev');
const kernel = new Kernel({ dev, onShutdown: () => process.exit(0) });

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
  if (err instanceof ConfigError) {
    process.stderr.write(`talon: configuration error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`talon: failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
}
