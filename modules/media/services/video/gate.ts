/**
 * At most one finished video in memory per process. A driver downloads a finished video inside its pollVideo (through
 * kit.download) and the bytes stay in memory until the upload store has written them; with four polls at once that
 * was four videos of up to [media] max_result_bytes each. The poller runs each poll in the gate's scope: a download
 * made in that scope waits for the gate and holds it until the poll, and the storing of its video, has ended. Polls
 * that only ask for a task's state never take it; downloads outside a poll (images) never wait for it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface Scope {
  signal: AbortSignal;
  held: boolean;
  done: boolean;
}

export class VideoGate {
  private readonly scopes = new AsyncLocalStorage<Scope>();
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  /** Runs one poll (`signal`: the poll's own); the gate, if the poll took it, is given back when it ends. */
  async poll<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const scope: Scope = { signal, held: false, done: false };
    try {
      return await this.scopes.run(scope, fn);
    } finally {
      scope.done = true;
      if (scope.held) this.release();
    }
  }

  /** Inside a poll: waits for the gate, once per poll. Outside one: returns at once. */
  async enter(): Promise<void> {
    const scope = this.scopes.getStore();
    if (!scope || scope.held) return;
    await this.acquire(scope.signal);
    // A poll that ended while it waited (a driver that gave up on its own) hands the gate straight on.
    if (scope.done) this.release();
    else scope.held = true;
  }

  private acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const take = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(signal.reason);
      };
      this.waiting.push(take);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The gate passes straight to the next in line, so no newcomer takes it in between. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  }
}
