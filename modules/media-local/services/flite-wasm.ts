import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import type { MediaDriverKit } from '@talon/media';

/**
 * The worker that runs flite.wasm under node:wasi: a worker so a synthesis of seconds never blocks the event loop,
 * and can be stopped (terminate) when its time is up. Its code is a string because module code is bundled (a worker
 * file beside it would not be there). Node 20 warns that WASI is experimental; this worker exists only to run WASI, so
 * it drops that one warning and lets any other through. flite's own output goes to a file in the call's folder.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const emit = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  if (String(warning && warning.message || warning).includes('WASI is an experimental feature')) return;
  return emit.call(this, warning, ...rest);
};
const { WASI } = require('node:wasi');
const fs = require('node:fs');
(async () => {
  const log = fs.openSync(workerData.dir + '/flite.log', 'w');
  try {
    const wasi = new WASI({ version: 'preview1', args: workerData.args, env: {}, preopens: { '/work': workerData.dir }, returnOnExit: true, stdout: log, stderr: log });
    const instance = await WebAssembly.instantiate(workerData.module, wasi.getImportObject());
    parentPort.postMessage({ code: wasi.start(instance) });
  } finally {
    fs.closeSync(log);
  }
})().catch((err) => parentPort.postMessage({ error: String((err && err.stack) || err) }));
`;

/** flite.wasm compiled once per file (14 MB: compiling is the slow part of a first call, not of the next ones). */
const compiled = new Map<string, Promise<WebAssembly.Module>>();

function moduleOf(file: string): Promise<WebAssembly.Module> {
  let pending = compiled.get(file);
  if (!pending) {
    pending = readFile(file).then((bytes) => WebAssembly.compile(bytes));
    compiled.set(file, pending);
    pending.catch(() => compiled.delete(file));
  }
  return pending;
}

/**
 * Runs flite.wasm with `args` (its argv, program name first) and the folder `dir` seen as /work, in a worker that is
 * terminated when the time is up or the caller gives up. A failure is an `outage` with flite's last line.
 */
export async function runFliteWasm(
  kit: MediaDriverKit,
  wasm: string,
  args: string[],
  dir: string,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<void> {
  const module = await moduleOf(wasm);
  options.signal.throwIfAborted();
  const worker = new Worker(WORKER, { eval: true, workerData: { module, args, dir } });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const outcome = await new Promise<{ code?: number; error?: string }>((resolve, reject) => {
      timer = setTimeout(
        () => reject(kit.error('outage', `flite (WebAssembly) did not finish within ${Math.round(options.timeoutMs / 1000)} s`)),
        options.timeoutMs,
      );
      onAbort = () => reject(options.signal.reason);
      options.signal.addEventListener('abort', onAbort, { once: true });
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(kit.error('outage', `flite (WebAssembly) stopped with code ${code} before it finished`)));
    });
    if (outcome.code !== 0) {
      const log = await readFile(`${dir}/flite.log`, 'utf8').catch(() => '');
      const why = outcome.error ?? (log.trim().split('\n').at(-1) || `exit code ${outcome.code}`);
      throw kit.error('outage', `flite (WebAssembly) failed: ${why.slice(0, 300)}`, { provider: 'local' });
    }
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal.removeEventListener('abort', onAbort);
    await worker.terminate();
  }
}
