/**
 * Generic Cell Rate Algorithm with a cost per request. One number per key:
 * the theoretical arrival time (TAT), the moment the key's budget will be
 * full again. A request of cost n moves TAT by n emission intervals; it is
 * refused when that would put TAT more than the burst window ahead of now.
 * Nothing refills on a timer, so time is a parameter and the arithmetic is
 * testable without sleeping.
 */
export interface GcraLimits {
  /** Cost units earned per second. */
  ratePerSecond: number;
  /** Seconds of rate that may be spent at once (burst = ratePerSecond * burstSeconds units). */
  burstSeconds: number;
}

export type GcraResult = { allowed: true; remaining: number } | { allowed: false; retryAfterMs: number };

export class Gcra {
  private readonly tat = new Map<string, number>();

  /** Charges cost units to key at time nowMs (milliseconds). */
  take(key: string, cost: number, nowMs: number, limits: GcraLimits): GcraResult {
    const interval = 1000 / limits.ratePerSecond;
    const window = limits.burstSeconds * 1000;
    // A request dearer than the whole burst could never pass: charge it the burst.
    const units = Math.min(cost, limits.ratePerSecond * limits.burstSeconds);
    const tat = Math.max(this.tat.get(key) ?? nowMs, nowMs);
    const next = tat + units * interval;
    const excess = next - nowMs - window;
    if (excess > 1e-9) return { allowed: false, retryAfterMs: excess };
    this.tat.set(key, next);
    return { allowed: true, remaining: Math.floor((window - (next - nowMs)) / interval) };
  }

  /** Forgets keys whose budget is full again (their state equals a fresh key's). */
  sweep(nowMs: number): number {
    let removed = 0;
    for (const [key, tat] of this.tat) {
      if (tat <= nowMs) {
        this.tat.delete(key);
        removed++;
      }
    }
    return removed;
  }

  get size(): number {
    return this.tat.size;
  }
}
