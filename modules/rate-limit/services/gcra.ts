/**
 * Generic Cell Rate Algorithm with a cost per request. One number per key:
 * the theoretical arrival time (TAT), the moment the key's budget will be
 * full again. A request of cost n moves TAT by n emission intervals; it is
 * refused when that would put TAT more than the burst window ahead of now.
 * Nothing refills on a timer, so time is a parameter and the arithmetic is
 * testable without sleeping. The step below is shared with the table-backed
 * limiter (stored-gcra.ts), which does the same arithmetic in one statement.
 */
export interface GcraLimits {
  /** Cost units earned per second. */
  ratePerSecond: number;
  /** Seconds of rate that may be spent at once (burst = ratePerSecond * burstSeconds units). */
  burstSeconds: number;
}

export type GcraResult = { allowed: true; remaining: number } | { allowed: false; retryAfterMs: number };

/** Floating-point slack: a request that exactly fills the window passes. */
const EPSILON_MS = 1e-9;

/** What a request of `cost` moves TAT by, and how far ahead of now TAT may be, both in milliseconds. */
export interface GcraStep {
  intervalMs: number;
  costMs: number;
  windowMs: number;
}

export function gcraStep(cost: number, limits: GcraLimits): GcraStep {
  const intervalMs = 1000 / limits.ratePerSecond;
  // A request dearer than the whole burst could never pass: charge it the burst.
  const units = Math.min(cost, limits.ratePerSecond * limits.burstSeconds);
  return { intervalMs, costMs: units * intervalMs, windowMs: limits.burstSeconds * 1000 };
}

/** The latest TAT a request may leave behind at nowMs and still pass. */
export const latestTat = (step: GcraStep, nowMs: number): number => nowMs + step.windowMs + EPSILON_MS;

/** The units still spendable once TAT is `next`. */
export const remainingAt = (step: GcraStep, next: number, nowMs: number): number => Math.floor((step.windowMs - (next - nowMs)) / step.intervalMs);

/** The answer for a request at nowMs against a key whose TAT is `tat` (undefined: a fresh key). */
export function gcraVerdict(step: GcraStep, tat: number | undefined, nowMs: number): GcraResult & { next: number } {
  const next = Math.max(tat ?? nowMs, nowMs) + step.costMs;
  const excess = next - nowMs - step.windowMs;
  if (excess > EPSILON_MS) return { allowed: false, retryAfterMs: excess, next };
  return { allowed: true, remaining: remainingAt(step, next, nowMs), next };
}

export class Gcra {
  private readonly tat = new Map<string, number>();

  /** Charges cost units to key at time nowMs (milliseconds). */
  take(key: string, cost: number, nowMs: number, limits: GcraLimits): GcraResult {
    const { next, ...result } = gcraVerdict(gcraStep(cost, limits), this.tat.get(key), nowMs);
    if (result.allowed) this.tat.set(key, next);
    return result;
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
