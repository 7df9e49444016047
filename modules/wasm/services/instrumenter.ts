import { Worker } from 'node:worker_threads';
import type { Prepared } from './compile.ts';

const COMPILE_TIMEOUT_MS = 60_000;
/** How long the instrumenting thread (and binaryen in it) is kept after its last job. */
const IDLE_MS = 10_000;

/**
 * One instrumenting thread, kept while there is work and for a while after: loading binaryen (a 15 MB script) is
 * most of the cost of instrumenting a small module, so a batch of modules (a reload, several installs) pays it once.
 */
export class Instrumenter {
  private worker?: Worker;
  private readonly jobs = new Map<number, { resolve: (p: Omit<Prepared, 'key'>) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  private seq = 0;
  private idle?: NodeJS.Timeout;

  constructor(private readonly file: string) {}

  run(data: { source: Buffer; wat: boolean; maxPages: number }): Promise<Omit<Prepared, 'key'>> {
    clearTimeout(this.idle);
    const worker = this.thread();
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      // A job that takes too long stops the thread: every job still in it fails and the next starts a new thread.
      const timer = setTimeout(() => this.fail(new Error('instrumenting the module took too long')), COMPILE_TIMEOUT_MS);
      this.jobs.set(id, { resolve, reject, timer });
      worker.postMessage({ id, ...data });
    });
  }

  close(): void {
    this.fail(new Error('the WASM runtime is stopping'));
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.file);
    worker.unref();
    worker.on('message', (msg: { id: number; ok: boolean; error?: string; bytes?: Uint8Array; memory?: Prepared['memory'] }) => {
      const job = this.jobs.get(msg.id);
      if (!job) return;
      this.jobs.delete(msg.id);
      clearTimeout(job.timer);
      if (msg.ok) job.resolve({ bytes: msg.bytes!, memory: msg.memory ?? null });
      else job.reject(new Error(msg.error));
      if (!this.jobs.size) this.idle = setTimeout(() => this.fail(new Error('idle')), IDLE_MS).unref();
    });
    worker.on('error', (err) => this.fail(err));
    this.worker = worker;
    return worker;
  }

  private fail(err: Error): void {
    clearTimeout(this.idle);
    void this.worker?.terminate();
    this.worker = undefined;
    for (const job of this.jobs.values()) {
      clearTimeout(job.timer);
      job.reject(err);
    }
    this.jobs.clear();
  }
}
