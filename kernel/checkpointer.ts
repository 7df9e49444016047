/**
 * WAL checkpoints in a worker thread. SQLite runs an automatic checkpoint inside the commit that takes the WAL past
 * `wal_autocheckpoint`: it copies the WAL into the database file and waits for two fsyncs, on the thread that serves
 * every request (30-50 ms every ~26 s in a soak on a quiet disk, seconds on a busy one). The worker's own connection
 * checkpoints every few seconds instead (PASSIVE: it never waits for readers or writers), so the WAL stays below the
 * automatic mark, which remains as the backstop should the worker stop (or before it starts). Not every second: the
 * first commit after a
 * complete checkpoint starts the WAL over and syncs its header, on the serving thread (well under a millisecond).
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export const CHECKPOINT_EVERY_MS = 5_000;
/**
 * The thread starts once the WAL has grown this far (checked at every round, a stat of the file): a service that
 * writes little never pays for it (a thread and its heap are about 8 MB of idle memory), and start-up stays free of it.
 */
export const START_AT_WAL_BYTES = 1024 * 1024;
const STOP_WAIT_MS = 5_000;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.lib);
const db = new Database(workerData.file, { fileMustExist: true });
let failing = false;
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    failing = false;
  } catch (err) {
    // Told once per run of failures: a broken database would repeat it at every round.
    if (!failing) parentPort.postMessage({ error: String((err && err.message) || err) });
    failing = true;
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});`;

export interface Checkpointer {
  /** Whether the thread has started (the WAL grew past START_AT_WAL_BYTES). */
  running(): boolean;
  /** Stops the worker and closes its connection (bounded wait). */
  stop(): Promise<void>;
}

function spawn(
  file: string,
  everyMs: number,
  onError: (message: string) => void,
): { worker: Worker; exited: Promise<void> } {
  const lib = createRequire(import.meta.url).resolve('better-sqlite3');
  // execArgv: none of the process's flags (--input-type=module would make the script ESM; a loader has no use here).
  const worker = new Worker(WORKER, { eval: true, execArgv: [], workerData: { lib, file, everyMs } });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (m: { error: string }) => onError(m.error));
  worker.on('error', (err) => onError(err.message));
  // Never what keeps the process alive (a kernel that is not stopped must not hang its process); after the
  // 'message' listener, which refs the worker again.
  worker.unref();
  return { worker, exited };
}

export function startCheckpointer(
  file: string,
  onError: (message: string) => void,
  everyMs = CHECKPOINT_EVERY_MS,
): Checkpointer {
  let running: ReturnType<typeof spawn> | undefined;
  const watch = setInterval(() => {
    if ((statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) < START_AT_WAL_BYTES) return;
    clearInterval(watch);
    running = spawn(file, everyMs, onError);
  }, everyMs);
  watch.unref();
  return {
    running: () => running !== undefined,
    async stop() {
      clearInterval(watch);
      if (!running) return;
      running.worker.postMessage('stop');
      const timer = setTimeout(() => void running?.worker.terminate(), STOP_WAIT_MS);
      await running.exited;
      clearTimeout(timer);
    },
  };
}
