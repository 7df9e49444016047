/**
 * The GCRA of gcra.ts with its TATs in a table, so that every process on the database charges one budget per key
 * (`[rate_limit] fleet = "exact"`). A request is one upsert: it inserts a fresh key, or moves an existing key's TAT
 * only where the result stays within the window, and returns the new TAT when it did. Two nodes charging one key at
 * once are ordered by the row's lock, and each update sees the other's TAT, so there is no read-modify-write race.
 * Times come from each node's clock (the heartbeats already need them in step).
 */
import type { Queries } from '@talon/module-sdk';
import { gcraStep, gcraVerdict, latestTat, remainingAt, type GcraLimits, type GcraResult } from './gcra.ts';

/** excluded.tat is now + cost: max(tat, now) + cost = max(tat + cost, now + cost). */
const upsert = (max: string) => `INSERT INTO rate_limit_tat (key, tat) VALUES (?, ?)
ON CONFLICT (key) DO UPDATE SET tat = ${max}(rate_limit_tat.tat + ?, excluded.tat)
WHERE ${max}(rate_limit_tat.tat + ?, excluded.tat) <= ?
RETURNING tat`;
const CHARGE = { sqlite: upsert('MAX'), postgres: upsert('GREATEST') };

export class StoredGcra {
  constructor(private readonly store: Queries) {}

  /** Charges cost units to key at time nowMs, in the table. */
  async take(key: string, cost: number, nowMs: number, limits: GcraLimits): Promise<GcraResult> {
    const step = gcraStep(cost, limits);
    const charged = await this.store.one<{ tat: number }>(this.store.pick(CHARGE), [
      key,
      nowMs + step.costMs,
      step.costMs,
      step.costMs,
      latestTat(step, nowMs),
    ]);
    if (charged) return { allowed: true, remaining: remainingAt(step, charged.tat, nowMs) };
    // Refused, which changed nothing: the TAT read now only tells how long to wait. Should it have moved meanwhile
    // (pruned, or spent less than the refusal saw), the client is told to come back after one interval.
    const row = await this.store.one<{ tat: number }>('SELECT tat FROM rate_limit_tat WHERE key = ?', [key]);
    const { next: _, ...verdict } = gcraVerdict(step, row?.tat, nowMs);
    return verdict.allowed ? { allowed: false, retryAfterMs: step.intervalMs } : verdict;
  }

  /** Deletes the keys whose budget is full again (their state equals a fresh key's). */
  async sweep(nowMs: number): Promise<number> {
    return (await this.store.run('DELETE FROM rate_limit_tat WHERE tat <= ?', [nowMs])).changes;
  }
}
