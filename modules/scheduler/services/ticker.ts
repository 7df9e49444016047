/**
 * The scheduler loop. It sleeps until the earliest next_run (at most tick_ms, so jobs written by another node are
 * seen), claims every due job with one conditional UPDATE that also inserts the run rows of the slots it runs (one
 * transaction), and hands the runs to the dispatcher without waiting for them. A job due while the service was down
 * is late at the first tick after the start: the misfire policy decides how often it runs (once by default, never
 * twice). A slot that comes while a run of the job is going (on any node) is skipped. A failure in one job never stops
 * the loop.
 */
import type { Logger } from 'pino';
import type { Queries, Store } from '@talon/module-sdk';
import type { SchedulerConfig } from '../config.ts';
import type { JobRow, JobStore } from './jobs.ts';
import type { Claimed, RunRows } from './runs.ts';
import type { Schedules } from './spec.ts';

/** Due jobs claimed per query; between batches the loop lets other work in. */
const BATCH = 500;

export interface TickerDeps {
  store: Store;
  jobs: JobStore;
  runs: RunRows;
  schedules: Schedules;
  config: () => SchedulerConfig;
  /** This node, and how long a claimed run is leased. */
  node: string;
  leaseMs: number;
  /** Whether this node may claim (ctx.nodes.active). */
  active: () => boolean;
  /** Runs a claimed job's runs one after another, in slot order (not awaited by the loop). */
  fire: (job: JobRow, runs: Claimed[]) => void;
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
  /** Bumped by each arm: an arm overtaken while it read the earliest slot sets no timer. */
  private arming = 0;
  private readonly now: () => number;

  constructor(private readonly deps: TickerDeps) {
    this.now = deps.now ?? Date.now;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.arm();
  }

  stop(): void {
    this.stopped = true;
    this.arming++;
    clearTimeout(this.timer);
  }

  /** A job changed: look again now rather than at the end of the current sleep. */
  poke(): void {
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    void this.arm().catch((err: unknown) => this.deps.log.error({ err }, 'scheduler could not plan its next look; the next change or start tries again'));
  }

  /** One pass: claims and dispatches everything due. Returns how many jobs it claimed. */
  async tick(): Promise<number> {
    const now = this.now();
    let claimed = 0;
    // A node that no longer beats is gone to the others, who take its claims over: it takes none again.
    if (!this.deps.active()) return claimed;
    for (;;) {
      const due = await this.deps.jobs.due(now, BATCH);
      // An idle tick takes no write lock: every process ticks, and they would queue behind each other's empty claims.
      if (!due.length) return claimed;
      // Claims of a batch commit together (with their run rows); the runs start after the commit.
      const runs = await this.deps.store.tx(async (t) => {
        const won: Array<[JobRow, Claimed[]]> = [];
        for (const job of due) {
          const fires = await this.claim(t, job, now);
          if (!fires) continue;
          won.push([job, fires]);
        }
        return won;
      });
      claimed += runs.length;
      for (const [job, fires] of runs) if (fires.length) this.deps.fire(job, fires);
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

  /**
   * Claims a due job in the batch's transaction: the runs to start now (maybe none: skipped, saying why), or
   * undefined when another claimer won or it cannot be planned.
   */
  private async claim(t: Queries, job: JobRow, now: number): Promise<Claimed[] | undefined> {
    let plan: Plan;
    try {
      plan = this.plan(job, now);
    } catch (err) {
      // A schedule that no longer parses (a time zone gone from the system): stop it, saying why, instead of retrying each tick.
      this.deps.log.warn({ err, job: job.id }, 'scheduled job cannot be planned; disabling it');
      await this.deps.jobs.disable(t, job.id, `cannot compute its next run: ${(err as Error).message}`);
      return undefined;
    }
    if (!(await this.deps.jobs.claim(t, job.id, job.next_run!, plan.next))) return undefined;
    if (!plan.fires.length) {
      await this.deps.jobs.recordSkip(t, job.id, job.next_run!, 'missed while the service was down (misfire_policy skip)');
      return [];
    }
    // A slow job never piles up runs behind it, whichever node runs it.
    if (await this.deps.runs.running(t, job.id)) {
      await this.deps.jobs.recordSkip(t, job.id, plan.fires[0], 'the previous run was still going');
      return [];
    }
    return this.deps.runs.insert(t, job.id, plan.fires, this.deps.node, now + this.deps.leaseMs, now);
  }

  private async arm(): Promise<void> {
    const generation = ++this.arming;
    const earliest = await this.deps.jobs.earliest();
    if (generation !== this.arming || this.stopped) return;
    clearTimeout(this.timer);
    const max = this.deps.config().tick_ms;
    const delay = earliest === null ? max : Math.max(0, Math.min(max, earliest - this.now()));
    this.timer = this.deps.setTimer(() => void this.loop(), delay);
  }

  private async loop(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.tick();
    } catch (err) {
      this.deps.log.error({ err }, 'scheduler tick failed; the next one follows');
    } finally {
      this.running = false;
    }
    if (this.stopped) return;
    // The next look is planned even when reading the earliest slot fails: at most tick_ms later.
    await this.arm().catch((err: unknown) => {
      this.deps.log.error({ err }, 'scheduler could not read its next slot; looking again after tick_ms');
      this.timer = this.deps.setTimer(() => void this.loop(), this.deps.config().tick_ms);
    });
  }
}
