import type { UsagePeriod } from '../api.ts';

/** Calendar windows in UTC: the current hour, day, ISO week (from Monday) and month. */
export function periodStart(period: UsagePeriod, now: number): number {
  const d = new Date(now);
  switch (period) {
    case 'hour':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours());
    case 'day':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'week':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

/** When the hourly token quota resets: the start of the next UTC hour. */
export function nextHour(now: number): number {
  return periodStart('hour', now) + 3_600_000;
}

/** Money rounded to a billionth of a dollar, so sums of floats read cleanly. */
export const usd = (value: number): number => Math.round(value * 1e9) / 1e9;
