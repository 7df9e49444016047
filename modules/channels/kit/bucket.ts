/**
 * Outbound pacing: a token bucket per account and one per (account, chat), so a reply burst or crons posting together
 * wait instead of tripping the platform's flood limits; and a platform 429 pauses the bucket it names for its
 * retry_after, a pause that is not a failure (the journal does not count it as an attempt). Buckets are kept in a map
 * keyed by account or chat that drops keys idle for idleMs, so a bot in many chats does not grow without bound.
 */
import { sleep, systemTimers, type Timers } from './timers.ts';

/** A burst of `capacity` messages, refilled at `perSecond`. */
export interface BucketSpec {
  capacity: number;
  perSecond: number;
}

interface Bucket {
  tokens: number;
  at: number;
  pausedUntil: number;
}

export interface KeyedBucketOptions {
  /** A key untouched this long, full and not paused, is dropped (default 10 minutes). */
  idleMs?: number;
  /** A hard bound: past it the least recently used key is dropped (default 10,000). */
  maxKeys?: number;
}

export class KeyedBuckets {
  /** In least recently used order: a key is moved to the end on every use, so the sweep stops at the first live one. */
  private readonly buckets = new Map<string, Bucket>();
  private readonly idleMs: number;
  private readonly maxKeys: number;

  constructor(
    private readonly spec: BucketSpec,
    private readonly timers: Timers = systemTimers,
    opts: KeyedBucketOptions = {},
  ) {
    if (!(spec.capacity >= 1) || !(spec.perSecond > 0)) throw new RangeError('a bucket needs a capacity of at least 1 and a positive rate');
    this.idleMs = opts.idleMs ?? 600_000;
    this.maxKeys = opts.maxKeys ?? 10_000;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Milliseconds until key has a token and no pause (0: now). */
  waitFor(key: string): number {
    const b = this.touch(key);
    const now = this.timers.now();
    const pause = Math.max(0, b.pausedUntil - now);
    const refill = b.tokens >= 1 ? 0 : Math.ceil(((1 - b.tokens) / this.spec.perSecond) * 1000);
    return Math.max(pause, refill);
  }

  /** Takes a token (call when waitFor answered 0). */
  take(key: string): void {
    this.touch(key).tokens -= 1;
  }

  /** Holds key until ms from now (a platform's retry_after). */
  pause(key: string, ms: number): void {
    const b = this.touch(key);
    b.pausedUntil = Math.max(b.pausedUntil, this.timers.now() + ms);
  }

  private touch(key: string): Bucket {
    const now = this.timers.now();
    let b = this.buckets.get(key);
    if (b) {
      b.tokens = Math.min(this.spec.capacity, b.tokens + ((now - b.at) / 1000) * this.spec.perSecond);
      b.at = now;
      this.buckets.delete(key);
    } else b = { tokens: this.spec.capacity, at: now, pausedUntil: 0 };
    this.sweep(now);
    this.buckets.set(key, b);
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    return b;
  }

  private sweep(now: number): void {
    for (const [key, b] of this.buckets) {
      if (now - b.at < this.idleMs) return;
      const full = b.tokens + ((now - b.at) / 1000) * this.spec.perSecond >= this.spec.capacity;
      if (full && b.pausedUntil <= now) this.buckets.delete(key);
    }
  }
}

export interface SendLimiterOptions extends KeyedBucketOptions {
  account: BucketSpec;
  chat: BucketSpec;
  timers?: Timers;
}

/** The account's and the chat's bucket together: a send waits until both have a token and neither is paused. */
export class SendLimiter {
  readonly accounts: KeyedBuckets;
  readonly chats: KeyedBuckets;
  private readonly timers: Timers;

  constructor(opts: SendLimiterOptions) {
    this.timers = opts.timers ?? systemTimers;
    this.accounts = new KeyedBuckets(opts.account, this.timers, opts);
    this.chats = new KeyedBuckets(opts.chat, this.timers, opts);
  }

  /** Resolves when a message to chat may go out (a token taken from both buckets); rejects if signal aborts. */
  async acquire(account: string, chat: string, signal?: AbortSignal): Promise<void> {
    const chatKey = `${account}\u0000${chat}`;
    for (;;) {
      const wait = Math.max(this.accounts.waitFor(account), this.chats.waitFor(chatKey));
      if (wait === 0) {
        this.accounts.take(account);
        this.chats.take(chatKey);
        return;
      }
      await sleep(wait, this.timers, signal);
    }
  }

  /** A platform 429: pauses the chat, or the whole account when the platform did not scope it to one chat. */
  retryAfter(ms: number, account: string, chat?: string): void {
    if (chat === undefined) this.accounts.pause(account, ms);
    else this.chats.pause(`${account}\u0000${chat}`, ms);
  }
}

/**
 * A 429's wait in milliseconds from what the platform sent: seconds as a number (Telegram `parameters.retry_after`,
 * Discord's `retry_after`, fractional), or a Retry-After header (seconds or an HTTP date). Undefined when absent or
 * unreadable.
 */
export function retryAfterMs(value: number | string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const seconds = typeof value === 'number' ? value : /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : undefined;
  if (seconds !== undefined) return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(value as string);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** What a send throws on a platform 429: the caller pauses and retries without counting an attempt. */
export class RateLimitedError extends Error {
  constructor(
    readonly retryAfterMs: number,
    /** The chat the limit applies to; absent when it applies to the whole account. */
    readonly chat?: string,
  ) {
    super(`rate limited by the platform; retry in ${retryAfterMs} ms`);
    this.name = 'RateLimitedError';
  }
}
