/**
 * Callers waiting for runs this copy does not execute: a keyed start that found a run begun by another process (or by
 * an earlier copy of this module), and a cancel relayed to the node executing the run. Each is answered once the run's
 * row has ended, woken by the change feed (another process ended the run), by this copy failing a gone node's runs, or
 * by a slow poll as the fallback (a note missed, or a run ended by an earlier copy in this process, whose notes this
 * process does not hear). Waits end with the copy: when its signal aborts, every waiter is rejected.
 */
import { conflict } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { RunRow, RunStore } from './runs.ts';

interface Waiter {
  resolve: (run: RunRow | undefined) => void;
  reject: (err: unknown) => void;
}

export class RunWaits {
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(
    private readonly runs: Pick<RunStore, 'get'>,
    /** The module copy's signal. */
    private readonly signal: AbortSignal,
    private readonly log: Logger,
  ) {
    signal.addEventListener('abort', () => this.abandon(), { once: true });
  }

  /**
   * The run's row once it is no longer open (undefined when it was deleted). Rejects when the copy stops, or with
   * `until`'s reason when that aborts first.
   */
  wait(runId: string, until?: AbortSignal): Promise<RunRow | undefined> {
    if (this.signal.aborted) return Promise.reject(stopped(runId));
    if (until?.aborted) return Promise.reject(until.reason);
    return new Promise((resolve, reject) => {
      const set = this.waiters.get(runId) ?? new Set();
      this.waiters.set(runId, set);
      const onAbort = () => {
        set.delete(waiter);
        if (!set.size) this.waiters.delete(runId);
        reject(until!.reason);
      };
      const waiter: Waiter = {
        resolve: (run) => {
          until?.removeEventListener('abort', onAbort);
          resolve(run);
        },
        reject: (err) => {
          until?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      set.add(waiter);
      until?.addEventListener('abort', onAbort, { once: true });
      // It may have ended before anyone here waited.
      void this.check([runId]);
    });
  }

  /** A run ended (a note's key; '' for a bulk end): its waiters look at its row. */
  heard(key: string): Promise<void> {
    return this.check(key ? [key] : [...this.waiters.keys()]);
  }

  /** The fallback poll: every run waited for is looked at. */
  poll(): Promise<void> {
    return this.check([...this.waiters.keys()]);
  }

  private async check(ids: string[]): Promise<void> {
    for (const id of ids) {
      if (!this.waiters.has(id)) continue;
      let run: RunRow | undefined;
      try {
        run = await this.runs.get(id);
      } catch (err) {
        this.log.warn({ err, runId: id }, 'reading a waited-for workflow run failed; the next poll tries again');
        continue;
      }
      if (run && (run.state === 'Pending' || run.state === 'Running')) continue;
      const set = this.waiters.get(id);
      this.waiters.delete(id);
      for (const w of set ?? []) w.resolve(run);
    }
  }

  private abandon(): void {
    for (const [id, set] of this.waiters) for (const w of set) w.reject(stopped(id));
    this.waiters.clear();
  }
}

const stopped = (runId: string) => conflict(`the workflows module stopped before run '${runId}' ended (the run goes on where it executes)`);
