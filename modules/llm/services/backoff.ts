/** Retry-After values above this are not honoured in full (reference: 300 s). */
const RETRY_AFTER_CAP_MS = 300_000;

/**
 * Delay before retry number `retry` (1-based), as the reference drivers do:
 * max(min(base·2^(retry-1), max), Retry-After) plus up to 50 % jitter of the exponential part.
 */
export function backoffDelay(retry: number, opts: { baseMs: number; maxMs: number; retryAfterMs?: number; random?: () => number }): number {
  const exp = Math.min(opts.baseMs * 2 ** (retry - 1), opts.maxMs);
  const floor = Math.min(opts.retryAfterMs ?? 0, RETRY_AFTER_CAP_MS);
  const jitter = (opts.random ?? Math.random)() * 0.5 * exp;
  return Math.round(Math.max(exp, floor) + jitter);
}

/** The error an aborted call rejects with: the signal's own AbortError reason, or a fresh one. */
export function abortError(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('the LLM call was aborted', 'AbortError');
}

/** Waits ms, rejecting with an AbortError as soon as signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settles like promise, but rejects with signal's reason as soon as it aborts (a driver that ignores its signal cannot hang a call). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * The signal of one provider attempt: follows the caller's signal and fires on
 * its own after timeoutMs without touch(). dispose() of an attempt that did not
 * finish aborts it, which closes the HTTP connection of a stream the consumer
 * left early; a finished one has nothing left to close (an abort costs an event
 * dispatch through every listener the SDK and fetch added).
 */
export class AttemptSignal {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  timedOut = false;
  private readonly onCallerAbort = () => this.controller.abort(this.caller?.reason);

  constructor(
    private readonly caller: AbortSignal | undefined,
    timeoutMs: number,
  ) {
    if (caller?.aborted) this.controller.abort(caller.reason);
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new DOMException('provider request timed out', 'TimeoutError'));
    }, timeoutMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Progress: the idle timeout starts again (re-arms the one timer). */
  touch(): void {
    this.timer.refresh();
  }

  dispose(finished: boolean): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
    if (!finished && !this.controller.signal.aborted) this.controller.abort(new DOMException('attempt finished', 'AbortError'));
  }
}
