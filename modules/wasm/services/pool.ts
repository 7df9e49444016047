/**
 * Warm executor threads. A call takes an idle worker (or waits for one); the epoch meter is a wall-clock deadline
 * per call: when it passes, or the caller aborts, the worker is terminated — whatever the guest is doing — and a
 * fresh one takes its place.
 */
import { Worker } from 'node:worker_threads';

export interface ExecRequest {
  key: string;
  bytes: Uint8Array;
  memory: { initial: number; maximum: number };
  envelope: string;
  fuel: number;
  capabilities: readonly string[];
  env: Readonly<Record<string, string>>;
  config: Record<string, unknown>;
  maxOutput: number;
}

export type ExecReply = { ok: true; output: unknown; fuelUsed: number } | { ok: false; kind: string; error: string; fuelUsed?: number };

interface Slot {
  worker: Worker;
  /** Settles when the thread said it is ready (or failed to start). */
  ready: Promise<void>;
  busy: boolean;
  /** Keys of the modules the thread has compiled. */
  known: Set<string>;
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Array<(slot: Slot) => void> = [];
  private seq = 0;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly size: () => number,
  ) {}

  async run(request: ExecRequest, timeoutMs: number, signal?: AbortSignal): Promise<ExecReply & { epoch?: boolean; aborted?: boolean }> {
    const slot = await this.acquire();
    try {
      await slot.ready;
    } catch (err) {
      this.replace(slot);
      return { ok: false, kind: 'trap', error: `the executor thread did not start: ${(err as Error).message}` };
    }
    const id = ++this.seq;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (reply: ExecReply & { epoch?: boolean; aborted?: boolean }, kill: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        slot.worker.off('message', onMessage);
        slot.worker.off('error', onError);
        if (kill) this.replace(slot);
        else this.release(slot);
        resolve(reply);
      };
      const onMessage = (msg: (ExecReply & { id: number }) | { id: number; missing: true }) => {
        if (msg.id !== id) return;
        // The thread dropped the module from its cache: send it again, with the bytes this time.
        if ('missing' in msg) return slot.worker.postMessage({ id, ...request });
        slot.known.add(request.key);
        finish(msg, false);
      };
      const onError = (err: Error) => finish({ ok: false, kind: 'trap', error: `the executor failed: ${err.message}` }, true);
      const onAbort = () => finish({ ok: false, kind: 'aborted', error: 'the call was stopped', aborted: true }, true);
      const timer = setTimeout(
        () => finish({ ok: false, kind: 'epoch', error: `timed out after ${timeoutMs} ms (epoch deadline)`, epoch: true }, true),
        timeoutMs,
      );
      slot.worker.on('message', onMessage);
      slot.worker.once('error', onError);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) return onAbort();
      // The module's bytes cross to the thread only the first time: it keeps the compiled module by key.
      slot.worker.postMessage(slot.known.has(request.key) ? { id, ...request, bytes: undefined } : { id, ...request });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private acquire(): Promise<Slot> {
    if (this.closed) return Promise.reject(new Error('the WASM runtime is stopping'));
    const idle = this.slots.find((s) => !s.busy);
    if (idle) {
      idle.busy = true;
      return Promise.resolve(idle);
    }
    if (this.slots.length < this.size()) {
      const slot: Slot = { ...this.spawn(), busy: true };
      this.slots.push(slot);
      return Promise.resolve(slot);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  private replace(slot: Slot): void {
    void slot.worker.terminate();
    if (this.closed) return;
    Object.assign(slot, this.spawn());
    this.release(slot);
  }

  private spawn(): { worker: Worker; ready: Promise<void>; known: Set<string> } {
    const worker = new Worker(this.file);
    worker.unref();
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (msg: { ready?: boolean }) => {
        if (!msg.ready) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    ready.catch(() => undefined);
    return { worker, ready, known: new Set() };
  }
}
