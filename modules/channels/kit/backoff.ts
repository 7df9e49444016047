/**
 * The reconnect loop every adapter runs its connection in. Transient failures are retried for ever, with exponential
 * backoff and full jitter capped at 30 s (a fleet of adapters does not reconnect in step after an outage); only an
 * error the adapter classifies as an auth error stops it, shown as last_error. The attempt counter resets on the
 * platform's own ready signal, not when a socket opens (a server that accepts and then drops would otherwise be
 * hammered), and a connection with no application-level traffic for livenessMs is torn down and rebuilt, which is
 * what catches a connection that looks open but receives nothing.
 */
import { sleep, systemTimers, type Timers } from './timers.ts';

/** What one connection reports to the loop. */
export interface ReconnectLink {
  /** The platform's ready signal (Discord READY/RESUMED, Slack hello, IRC 001, a first getUpdates answer). */
  ready(): void;
  /** Any application-level traffic: a message, a heartbeat ack, an empty long-poll answer, a PONG. */
  traffic(): void;
  /** Aborted when the loop gives this connection up (watchdog, abort); its sockets are then torn down. */
  signal: AbortSignal;
}

export interface ReconnectOptions {
  /** Opens one connection and settles when it ends: resolves when it closes, rejects with the cause. */
  connect(link: ReconnectLink): Promise<void>;
  /** Closes every socket of the connection; called after each connection ends, whatever the reason, so none leaks. */
  teardown(reason: 'closed' | 'error' | 'dead' | 'aborted'): void | Promise<void>;
  /** True for a failure retrying cannot fix (401, a revoked token, a logged-out session). */
  isAuthError(err: unknown): boolean;
  /** The error as shown in last_error; adapters redact what the platform's error may carry (a token in a URL). */
  describe?(err: unknown): string;
  /** Tear the connection down after this long without traffic. */
  livenessMs: number;
  /** The first retry waits up to baseMs (default 1 s); each further one doubles it, up to capMs (default 30 s). */
  baseMs?: number;
  capMs?: number;
  /** Stops the loop: the current connection is torn down and run() resolves. */
  signal?: AbortSignal;
  timers?: Timers;
  random?: () => number;
  /** Called on every change, for the adapter's health report. */
  onState?(health: ReconnectHealth): void;
}

export interface ReconnectHealth {
  state: 'connecting' | 'ready' | 'waiting' | 'stopped' | 'aborted';
  /** Failed connections since the last ready signal. */
  attempt: number;
  lastError: string | null;
  lastTrafficAt: number | null;
}

export const RECONNECT_CAP_MS = 30_000;

/**
 * A Reconnector's `onState` that reports the connection to the channels module, each change once: `connected` on the
 * platform's ready signal, `connecting` with the last error while waiting to retry, `error` once given up.
 */
export function reportHealth(ctx: { report(state: 'connecting' | 'connected' | 'error', error?: string): void }): (health: ReconnectHealth) => void {
  let previous: ReconnectHealth['state'] | undefined;
  return (health) => {
    if (health.state === previous) return;
    previous = health.state;
    if (health.state === 'ready') ctx.report('connected');
    else if (health.state === 'stopped') ctx.report('error', health.lastError ?? 'stopped');
    else if (health.state === 'waiting') ctx.report('connecting', health.lastError ?? undefined);
  };
}

/** Full jitter: a uniform wait in [0, min(cap, base·2^attempt)). */
export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** attempt));
}

const describeError = (err: unknown) => (err instanceof Error ? err.message : String(err));

type Outcome = { kind: 'closed' } | { kind: 'error'; err: unknown } | { kind: 'dead' } | { kind: 'aborted' };

export class Reconnector {
  private readonly health: ReconnectHealth = { state: 'connecting', attempt: 0, lastError: null, lastTrafficAt: null };
  private readonly timers: Timers;

  constructor(private readonly opts: ReconnectOptions) {
    this.timers = opts.timers ?? systemTimers;
  }

  get status(): ReconnectHealth {
    return { ...this.health };
  }

  /** Runs until aborted or stopped by an auth error; resolves with the final health. */
  async run(): Promise<ReconnectHealth> {
    const { signal } = this.opts;
    for (;;) {
      if (signal?.aborted) return this.set({ state: 'aborted' });
      this.set({ state: 'connecting' });
      const outcome = await this.connectOnce();
      if (outcome.kind === 'aborted') return this.set({ state: 'aborted' });
      if (outcome.kind === 'error') {
        const lastError = (this.opts.describe ?? describeError)(outcome.err);
        if (this.opts.isAuthError(outcome.err)) return this.set({ state: 'stopped', lastError });
        this.set({ lastError });
      } else if (outcome.kind === 'dead') this.set({ lastError: `no traffic for ${this.opts.livenessMs} ms; reconnecting` });
      const delay = backoffDelay(this.health.attempt, this.opts.baseMs ?? 1000, this.opts.capMs ?? RECONNECT_CAP_MS, this.opts.random ?? Math.random);
      this.set({ state: 'waiting', attempt: this.health.attempt + 1 });
      try {
        await sleep(delay, this.timers, signal);
      } catch {
        return this.set({ state: 'aborted' });
      }
    }
  }

  private set(change: Partial<ReconnectHealth>): ReconnectHealth {
    Object.assign(this.health, change);
    const copy = this.status;
    this.opts.onState?.(copy);
    return copy;
  }

  /** One connection, from connect to teardown. */
  private async connectOnce(): Promise<Outcome> {
    const { timers, opts } = this;
    const conn = new AbortController();
    let lastTraffic = timers.now();
    let watchdog: unknown;
    const traffic = () => {
      if (conn.signal.aborted) return; // a late call from a connection already given up
      lastTraffic = timers.now();
      this.health.lastTrafficAt = lastTraffic;
    };
    const outcome = await new Promise<Outcome>((resolve) => {
      const check = () => {
        const idle = timers.now() - lastTraffic;
        if (idle >= opts.livenessMs) resolve({ kind: 'dead' });
        else watchdog = timers.setTimeout(check, opts.livenessMs - idle);
      };
      watchdog = timers.setTimeout(check, opts.livenessMs);
      const onAbort = () => resolve({ kind: 'aborted' });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      conn.signal.addEventListener('abort', () => opts.signal?.removeEventListener('abort', onAbort), { once: true });
      const link: ReconnectLink = {
        ready: () => {
          if (conn.signal.aborted) return;
          traffic();
          this.set({ state: 'ready', attempt: 0 });
        },
        traffic,
        signal: conn.signal,
      };
      let started: Promise<void>;
      try {
        started = opts.connect(link);
      } catch (err) {
        started = Promise.reject(err);
      }
      started.then(
        () => resolve({ kind: 'closed' }),
        (err: unknown) => resolve({ kind: 'error', err }),
      );
    });
    timers.clearTimeout(watchdog);
    conn.abort();
    try {
      await opts.teardown(outcome.kind);
    } catch {
      // A failing teardown must not stop the loop; the next connection is a fresh one.
    }
    return outcome;
  }
}
