/**
 * At most `slots()` engine runs at once; the others wait in line, in order. Each local run is a process or a worker
 * of 50 to 120 MB (flite, pocketsphinx) that takes a core for seconds: a burst of requests queues instead of
 * exhausting memory. A caller that gives up while waiting leaves the line.
 */
export function limiter(slots: () => number): <T>(signal: AbortSignal, fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];

  const acquire = (signal: AbortSignal): Promise<void> => {
    signal.throwIfAborted();
    if (active < slots()) {
      active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        waiting.splice(waiting.indexOf(take), 1);
        reject(signal.reason);
      };
      const take = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      waiting.push(take);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  };

  // The slot passes straight to the next in line, so a newcomer cannot take it in between.
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };

  return async (signal, fn) => {
    await acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  };
}
