/**
 * The typing indicator belongs to a turn: shown when the turn starts, refreshed while it runs (platforms expire it:
 * Telegram after 5 s, Discord after 10 s), and always stopped in a `finally`, whether the turn ends, throws or is
 * aborted, so an indicator never outlives its turn. Indicator calls never fail the turn: their errors go to onError.
 */
import { systemTimers, type Timers } from './timers.ts';

/** The platform side: show (or refresh) the indicator, and clear it where the platform has a call for that. */
export interface TypingIndicator {
  start(): Promise<void>;
  stop?(): Promise<void>;
}

export interface TypingOptions {
  /** How often the indicator is sent again while the turn runs. */
  refreshMs: number;
  /** A turn still running after this long stops refreshing anyway (default 10 minutes). */
  maxMs?: number;
  timers?: Timers;
  onError?(err: unknown): void;
}

export class TypingController {
  private stopped = false;
  private timer: unknown;
  /** The indicator call in flight: calls never overlap, and stop() runs after a start() already sent. */
  private chain: Promise<void> = Promise.resolve();
  private readonly timers: Timers;
  private readonly startedAt: number;

  constructor(
    private readonly indicator: TypingIndicator,
    private readonly opts: TypingOptions,
  ) {
    this.timers = opts.timers ?? systemTimers;
    this.startedAt = this.timers.now();
  }

  get active(): boolean {
    return !this.stopped;
  }

  /** Shows the indicator and keeps refreshing it until stop(). */
  start(): void {
    if (this.stopped) return;
    this.call(() => this.indicator.start());
    this.timer = this.timers.setTimeout(() => this.tick(), this.opts.refreshMs);
  }

  /** Stops refreshing and clears the indicator; idempotent; resolves once the platform call is done. */
  stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.timers.clearTimeout(this.timer);
      const { stop } = this.indicator;
      if (stop) this.call(() => stop.call(this.indicator), true);
    }
    return this.chain;
  }

  private tick(): void {
    if (this.stopped) return;
    if (this.timers.now() - this.startedAt >= (this.opts.maxMs ?? 600_000)) {
      void this.stop();
      return;
    }
    this.start();
  }

  private call(fn: () => Promise<void>, evenIfStopped = false): void {
    this.chain = this.chain.then(async () => {
      if (this.stopped && !evenIfStopped) return;
      try {
        await fn();
      } catch (err) {
        this.opts.onError?.(err);
      }
    });
  }
}

/** Runs a turn with the typing indicator on, stopping it in a finally (and at once if signal aborts). */
export async function withTyping<T>(indicator: TypingIndicator, opts: TypingOptions & { signal?: AbortSignal }, turn: () => Promise<T>): Promise<T> {
  const typing = new TypingController(indicator, opts);
  const onAbort = () => void typing.stop();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (!opts.signal?.aborted) typing.start();
    return await turn();
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    await typing.stop();
  }
}
