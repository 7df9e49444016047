/**
 * The scheduler loop. It sleeps until the earliest next_run (at most tick_ms, so jobs written by another node are
 * seen), claims every due job with one conditional UPDATE, and hands the runs to the dispatcher without waiting for
 * them. A job due while the service was down is late at the first tick after the start: the misfire policy
 * decides how often it runs (once by default, never twice). A failure in one job never stops the loop.
 */
import type { Logger } from 'pino';
import type { SchedulerConfig } from '../config.ts';
import type { JobRow, JobStore } from './jobs.ts';
import type { Schedules } from './spec.ts';

/** Due jobs claimed per query; between batches the loop lets other work in. */
const BATCH = 500;

export interface TickerDeps {
  jobs: JobStore;
  schedules: Schedules;
  config: () => SchedulerConfig;
  /** Runs a claimed job once per slot, in order (not awaited by the loop). */
  fire: (job: JobRow, slots: number[]) => void;
  log: Logger;
  setTimer: (fn: () => void, ms: number) => NodeJS.Timeout;
  now?: () => number;
}

export interface Plan {
  /** Slot times to run now (empty: skipped). */
  fires: number[];
  /** The job's next slot after now (null: none, a one-shot). */
  next: number | null;
}

export class Ticker {
  private timer?: NodeJS.Timeout;
  private running = false;
  private stopped = true;
  private readonly now: () => number;

  constructor(private readonly deps: TickerDeps) {
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** A job changed: look again now rather than at the end of the current sleep. */
  poke(): void {
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    this.arm();
  }

  /** One pass: claims and dispatches everything due. Returns how many jobs it claimed. */
  async tick(): Promise<number> {
    const now = this.now();
    let claimed = 0;
    for (;;) {
      // Claims of a batch commit together; the runs start after the commit.
      const runs: Array<[JobRow, number[]]> = [];
      const due = this.deps.jobs.batch(() => {
        const rows = this.deps.jobs.due(now, BATCH);
        for (const job of rows) {
          const fires = this.claim(job, now);
          if (!fires) continue;
          claimed++;
          if (fires.length) runs.push([job, fires]);
        }
        return rows;
      });
      for (const [job, fires] of runs) this.deps.fire(job, fires);
      if (due.length < BATCH) return claimed;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** When and how often a due job runs now, by its misfire policy. */
  plan(job: JobRow, now: number): Plan {
    const config = this.deps.config();
    const schedule = this.deps.schedules.parse(job.schedule, job.tz);
    const next = schedule.kind === 'at' ? null : this.deps.schedules.next(schedule, job.anchor, now);
    const due = job.next_run!;
    if (now - due < config.misfire_grace_secs * 1000) return { fires: [due], next };
    const policy = job.misfire_policy ?? config.misfire_policy;
    if (policy === 'skip') return { fires: [], next };
    if (policy === 'all' && schedule.kind !== 'at') {
      const slots = this.deps.schedules.slots(schedule, job.anchor, due, now, config.max_catch_up);
      return { fires: slots.length ? slots : [due], next };
    }
    return { fires: [due], next };
  }

  /** Claims a due job: the slots to run now (maybe none), or undefined when another claimer won or it cannot be planned. */
  private claim(job: JobRow, now: number): number[] | undefined {
    try {
      const plan = this.plan(job, now);
      if (!this.deps.jobs.claim(job.id, job.next_run!, plan.next)) return undefined;
      if (!plan.fires.length) this.deps.jobs.recordSkip(job.id, job.next_run!, 'missed while the service was down (misfire_policy skip)');
      return plan.fires;
    } catch (err) {
      // A schedule that no longer parses (a time zone gone from the system): stop it, saying why, instead of retrying each tick.
      this.deps.log.warn({ err, job: job.id }, 'scheduled job cannot be planned; disabling it');
      this.deps.jobs.disable(job.id, `cannot compute its next run: ${(err as Error).message}`);
      return undefined;
    }
  }

  private arm(): void {
    const earliest = this.deps.jobs.earliest();
    const max = this.deps.config().tick_ms;
    const delay = earliest === null ? max : Math.max(0, Math.min(max, earliest - this.now()));
    this.timer = this.deps.setTimer(() => void this.loop(), delay);
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      await this.tick();
    } catch (err) {
      this.deps.log.error({ err }, 'scheduler tick failed; the next one follows');
    } finally {
      this.running = false;
    }
    if (!this.stopped) this.arm();
  }
}
