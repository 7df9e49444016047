/**
 * Runs of a node that died (or stopped) while they were going: any live node takes each over with one conditional
 * UPDATE (`… WHERE node = <dead> AND state = 'running'`), so exactly one node acts on it, and then runs it again or
 * marks it lost as the job's misfire policy says of a late slot: 'all' runs each again, 'fire_once' the latest one,
 * 'skip' none; a slot still within misfire_grace_secs is on time and runs again whatever the policy. A manual run is
 * never run again (its caller's request died with the node, unanswered: it asks again if it wants). A lost run is
 * recorded on its row and in the job's status; an `at` job whose only slot was lost is disabled, saying so.
 */
import type { Logger } from 'pino';
import type { Store } from '@talon/module-sdk';
import type { MisfirePolicy, SchedulerConfig } from '../config.ts';
import type { JobRow, JobStore } from './jobs.ts';
import type { Claimed, RunRow, RunRows } from './runs.ts';

export interface TakeoverDeps {
  store: Store;
  jobs: JobStore;
  runs: RunRows;
  config: () => SchedulerConfig;
  node: string;
  leaseMs: number;
  /** Runs the runs taken over, in slot order (not awaited). */
  fire: (job: JobRow, runs: Claimed[]) => void;
  log: Logger;
  now?: () => number;
}

/** A run for a slot of the schedule (not a manual one). */
export type SlotRun = RunRow & { slot: number };

/** Which of a gone node's scheduled runs of one job run again, and which are lost. */
export function decide(policy: MisfirePolicy, held: readonly SlotRun[], now: number, graceMs: number): { rerun: SlotRun[]; lost: SlotRun[] } {
  if (policy === 'all') return { rerun: [...held], lost: [] };
  const onTime = held.filter((r) => now - r.slot < graceMs);
  const rerun = onTime.length ? onTime : policy === 'fire_once' ? held.slice(-1) : [];
  return { rerun, lost: held.filter((r) => !rerun.includes(r)) };
}

export class Takeover {
  private readonly now: () => number;

  constructor(private readonly deps: TakeoverDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** At start: the runs of nodes that are not live (they died while no node was running, or long ago). */
  async sweep(live: ReadonlySet<string>): Promise<void> {
    for (const node of await this.deps.runs.holders()) if (!live.has(node) && node !== this.deps.node) await this.takeOver(node);
  }

  /** A gone node's running runs, job by job. */
  async takeOver(node: string): Promise<void> {
    const byJob = new Map<string, RunRow[]>();
    for (const run of await this.deps.runs.heldBy(node)) byJob.set(run.job_id, [...(byJob.get(run.job_id) ?? []), run]);
    for (const [jobId, held] of byJob) {
      const job = await this.deps.jobs.get(jobId);
      if (job) await this.takeJob(node, job, held);
    }
  }

  private async takeJob(node: string, job: JobRow, held: RunRow[]): Promise<void> {
    const config = this.deps.config();
    const policy = job.misfire_policy ?? config.misfire_policy;
    const now = this.now();
    const slots = held.filter((r): r is SlotRun => r.slot !== null);
    const { rerun, lost } = job.enabled ? decide(policy, slots, now, config.misfire_grace_secs * 1000) : { rerun: [], lost: slots };
    const why = job.enabled
      ? `its node (${node}) died while it ran, and misfire_policy ${policy} does not run a late slot again`
      : `its node (${node}) died while it ran, and the job is disabled`;
    const losses = [
      ...held.filter((r) => r.slot === null).map((run) => ({ run, why: `its node (${node}) died during this manual run, which is not run again` })),
      ...lost.map((run) => ({ run, why })),
    ];
    let lostHere = 0;
    for (const { run, why } of losses) {
      // The last slot of an `at` job: nothing else will run it.
      const lastSlot = job.kind === 'at' && run === slots[slots.length - 1];
      const won = await this.deps.store.tx(async (t) => {
        if (!(await this.deps.runs.lose(t, run.id, node, why, now))) return false;
        await this.deps.jobs.recordLost(t, job.id, run.slot, why, lastSlot);
        return true;
      });
      if (won) lostHere++;
    }
    const adopted: Claimed[] = [];
    for (const run of rerun)
      if (await this.deps.runs.adopt(run.id, node, this.deps.node, now + this.deps.leaseMs, now)) adopted.push({ id: run.id, slot: run.slot });
    if (adopted.length) this.deps.fire(job, adopted);
    if (lostHere || adopted.length)
      this.deps.log.info({ job: job.id, node, rerun: adopted.length, lost: lostHere }, 'scheduled runs of a gone node taken over');
  }
}
