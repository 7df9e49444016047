/**
 * The daemon for bench/memory.ts: a kernel with only the memory module (and
 * the error envelope) on the given home, so its RSS is the memory module's.
 * Usage: node --import tsx bench/memory/server.ts <home>
 */
import { Kernel } from '../../kernel/kernel.ts';

const kernel = new Kernel({ home: process.argv[2], only: ['memory', 'error-envelope'], stdout: false });
process.on('SIGTERM', () => void kernel.stop('SIGTERM').then(() => process.exit(0)));
await kernel.start();
