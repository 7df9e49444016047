/**
 * The daemon for bench/operations.ts: a kernel with what a backup and a restore touch.
 * Usage: node --import tsx bench/operations/server.ts <home>
 */
import { Kernel } from '../../kernel/kernel.ts';

const only = ['system', 'backup', 'audit', 'agents', 'memory', 'llm', 'error-envelope'];
const kernel = new Kernel({ home: process.argv[2], only, stdout: false });
process.on('SIGTERM', () => void kernel.stop('SIGTERM').then(() => process.exit(0)));
await kernel.start();
