/** The deadline of a bounded job passed: its git child was killed. */
export class DeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`checkpoint operation took longer than ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

/**
 * One promise chain per key (a shadow repository): jobs of one key run one
 * after the other, jobs of different keys in parallel. Each job has a
 * deadline that counts from the moment it is queued; when it passes, the
 * caller gets DeadlineError at once and the job's signal aborts (killing its
 * git child, or skipping the job if it has not started yet).
 */
export class SerialQueues {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly live = new Set<AbortController>();

  run<T>(key: string, deadlineMs: number, job: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.live.add(controller);
    const start = (): Promise<T> => (controller.signal.aborted ? Promise.reject(controller.signal.reason) : job(controller.signal));
    const result = (this.tails.get(key) ?? Promise.resolve()).then(start);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      this.live.delete(controller);
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const error = new DeadlineError(deadlineMs);
        controller.abort(error);
        reject(error);
      }, deadlineMs);
    });
    return Promise.race([result, deadline]).finally(() => clearTimeout(timer));
  }

  /** Aborts every queued and running job and waits until the chains are idle (module stop). */
  async close(): Promise<void> {
    for (const controller of this.live) controller.abort(new Error('checkpoints module stopping'));
    await Promise.all(this.tails.values());
  }
}
