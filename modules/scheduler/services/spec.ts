/**
 * Schedule expressions and their times. Three kinds:
 * - cron: standard 5 fields (minute hour day-of-month month day-of-week), parsed and computed by croner in an IANA
 *   time zone (default UTC). Day of week 0 and 7 are Sunday; when both day fields are restricted either may match
 *   (POSIX). Names (MON, JAN) and @hourly/@daily/@weekly/@monthly/@yearly are accepted; seconds fields are not.
 * - every: `every <n><unit>` with s, m, h or d (also the words: `every 5 minutes`, `every hour`): fixed slots
 *   counted from the job's anchor (its creation or last schedule change), so they never drift.
 * - at: `at <ISO 8601 timestamp>`, one run (a timestamp without an offset is read in the job's time zone).
 */
import { Cron } from 'croner';
import { badRequest } from '@talon/module-sdk';

export type Kind = 'cron' | 'every' | 'at';

export interface Schedule {
  kind: Kind;
  /** cron: the expression; every: the interval in ms; at: the instant in ms. */
  expr: string;
  everyMs: number;
  at: number;
  tz: string;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const EVERY = /^every\s+(?:(\d+)\s*)?(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)$/i;
/** A year: a longer interval is a cron expression's job (@yearly), and the slots stay far from the date range's end. */
const LONGEST_EVERY_DAYS = 366;
/** The three forms, for every message that refuses a schedule. */
export const SCHEDULE_FORMS =
  'a schedule is a 5-field cron expression (minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5"), ' +
  '"every <n><unit>" with the unit s, m, h or d (e.g. "every 5m", also "every 2 hours"), or "at <ISO 8601 time>"';
const HAS_OFFSET = /(z|[+-]\d\d:?\d\d)$/i;
/**
 * Compiled cron expressions kept, most recently used: compiling costs more than computing a next time, and each
 * compiled expression holds about 80 KB (croner keeps a 10,000-entry year table), so the cache stays small.
 */
const CACHE_LIMIT = 256;

export class Schedules {
  private readonly cache = new Map<string, Cron>();
  /** Next cron times asked for one instant, by expression and zone: a tick asks for many jobs at the same `now`. */
  private readonly sameInstant = { after: NaN, next: new Map<string, number | null>() };
  /** Zone names already checked (building an Intl.DateTimeFormat costs a quarter of a millisecond). */
  private readonly zones = new Set<string>(['UTC']);

  /**
   * Parses a schedule; 400 naming the problem. With `check` (new or changed schedules) it also refuses intervals
   * below the minimum, one-shots in the past and cron expressions that never fire again.
   */
  parse(text: string, tz: string | null | undefined, check?: { minIntervalSecs: number; now: number }): Schedule {
    const zone = this.zone(tz);
    const s = text.trim();
    if (/^every\b/i.test(s)) return { kind: 'every', expr: s, everyMs: this.interval(s, check), at: 0, tz: zone };
    if (/^at\s+/i.test(s)) {
      const at = this.instant(s.replace(/^at\s+/i, ''), zone);
      if (check && at <= check.now) throw badRequest(`'${s}' is in the past`);
      return { kind: 'at', expr: s, everyMs: 0, at, tz: zone };
    }
    // A stored expression was checked when it was written; it is compiled when a next time is asked for.
    if (check && !this.cron(s, zone).nextRun(new Date(check.now))) throw badRequest(`cron expression '${s}' has no future fire time`);
    return { kind: 'cron', expr: s, everyMs: 0, at: 0, tz: zone };
  }

  /** The first slot strictly after `after`, or null (a one-shot that has passed). */
  next(s: Schedule, anchor: number, after: number): number | null {
    if (s.kind === 'every') return anchor + (Math.floor((after - anchor) / s.everyMs) + 1) * s.everyMs;
    if (s.kind === 'at') return s.at > after ? s.at : null;
    if (after !== this.sameInstant.after) {
      this.sameInstant.after = after;
      this.sameInstant.next.clear();
    }
    const key = `${s.expr}\u0000${s.tz}`;
    let next = this.sameInstant.next.get(key);
    if (next === undefined) {
      next = this.cron(s.expr, s.tz).nextRun(new Date(after))?.getTime() ?? null;
      this.sameInstant.next.set(key, next);
    }
    return next;
  }

  /** Slots in [from, to], oldest first, at most the `limit` most recent. */
  slots(s: Schedule, anchor: number, from: number, to: number, limit: number): number[] {
    if (s.kind === 'at') return s.at >= from && s.at <= to ? [s.at] : [];
    if (s.kind === 'every') {
      const last = anchor + Math.floor((to - anchor) / s.everyMs) * s.everyMs;
      const out: number[] = [];
      for (let t = last; t >= from && out.length < limit; t -= s.everyMs) out.push(t);
      return out.reverse();
    }
    return this.cron(s.expr, s.tz)
      .previousRuns(limit, new Date(to + 1))
      .map((d) => d.getTime())
      .filter((t) => t >= from)
      .reverse();
  }

  private cron(expr: string, tz: string): Cron {
    const key = `${expr}\u0000${tz}`;
    let cron = this.cache.get(key);
    if (cron) this.cache.delete(key);
    else {
      try {
        cron = new Cron(expr, { mode: '5-part', timezone: tz, paused: true });
      } catch (err) {
        throw badRequest(`invalid cron expression '${expr}': ${cronProblem(expr, err as Error)}; ${SCHEDULE_FORMS}`);
      }
      if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(key, cron);
    return cron;
  }

  /** The milliseconds of an `every` schedule; 400 saying what the form is. */
  private interval(s: string, check: { minIntervalSecs: number } | undefined): number {
    const every = EVERY.exec(s);
    if (!every) throw badRequest(`'${s}' is not an interval: write "every <n><unit>" with the unit s, m, h or d (e.g. "every 5m", "every 2 hours")`);
    const n = every[1] === undefined ? 1 : Number(every[1]);
    const ms = n * UNITS[every[2][0].toLowerCase()];
    if (ms <= 0) throw badRequest(`'${s}' is not an interval: the number must be at least 1`);
    if (check && ms > LONGEST_EVERY_DAYS * UNITS.d)
      throw badRequest(`'${s}' is longer than ${LONGEST_EVERY_DAYS} days: use a cron expression (e.g. "@yearly")`);
    if (check && ms < check.minIntervalSecs * 1000) throw badRequest(`'${s}' is shorter than the shortest interval allowed (${check.minIntervalSecs}s)`);
    return ms;
  }

  /** An IANA zone name; '' or null = UTC. 400 for an unknown zone. */
  private zone(tz: string | null | undefined): string {
    if (!tz || tz.toUpperCase() === 'UTC') return 'UTC';
    if (this.zones.has(tz)) return tz;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
    } catch {
      throw badRequest(`unknown time zone '${tz}' (use an IANA name such as Europe/Paris)`);
    }
    this.zones.add(tz);
    return tz;
  }

  private instant(text: string, tz: string): number {
    const t = text.trim();
    let ms = HAS_OFFSET.test(t) ? Date.parse(t) : NaN;
    if (!HAS_OFFSET.test(t) && /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d/.test(t)) {
      // A wall-clock time in the job's zone: croner turns it into the instant (a one-off date pattern).
      try {
        ms = new Cron(t.replace(' ', 'T'), { timezone: tz, paused: true }).nextRun(new Date(0))?.getTime() ?? NaN;
      } catch {
        ms = NaN;
      }
    }
    if (Number.isNaN(ms)) throw badRequest(`'${text}' is not an ISO 8601 timestamp (e.g. 2026-12-01T09:00:00Z)`);
    return ms;
  }
}

/** What is wrong with a cron expression croner refused: the field count first (croner's own text also allows 6 and 7). */
function cronProblem(expr: string, err: Error): string {
  const fields = expr.split(/\s+/).filter(Boolean).length;
  if (!expr.startsWith('@') && fields !== 5) return `it has ${fields} field${fields === 1 ? '' : 's'}, a cron expression has 5`;
  return err.message.replace(/^CronPattern: /, '');
}
