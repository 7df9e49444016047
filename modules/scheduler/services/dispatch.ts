/**
 * Runs a job once: an agent turn (in the queue's 'schedule' lane, origin 'schedule') whose reply goes to the
 * deliveries, a workflow run, or a module's handler (scheduler.jobs). Records the outcome on the job, and ends the
 * run's row (scheduled or manual) in the same transaction, and publishes schedule.fired. Never rejects.
 *
 * A workflow run takes no 'schedule' lane slot: once started (its row committed, keyed by the slot) it is the workflows
 * module's, and its steps queue in the 'workflow' lane; a schedule slot held while they wait there would stop every
 * other job from firing behind a few long workflows.
 */
import type { Logger } from 'pino';
import type { EventChannel, Store } from '@talon/module-sdk';
import type { TaskQueue } from '@talon/tasks';
import type { WorkflowRunner } from '@talon/workflows';
import type { Deliveries } from '@talon/triggers';
import type { HandlerOutcome, HandlerRun, scheduleEvents } from '@talon/scheduler';
import type { SchedulerConfig } from '../config.ts';
import type { JobRow, JobStore, Outcome, Scheduled } from './jobs.ts';
import type { Claimed, Held, RunRows } from './runs.ts';

export interface RunReport {
  status: 'completed' | 'failed';
  schedule_id: string;
  agent_id: string | null;
  workflow_id: string | null;
  response?: string;
  run_id?: string;
  error?: string;
}

export interface DispatchDeps {
  store: Store;
  jobs: JobStore;
  runs: RunRows;
  /** This node: the run rows it ends are its own; and how long a manual run's row is leased. */
  node: string;
  leaseMs: number;
  queue: () => TaskQueue;
  workflows: () => WorkflowRunner | undefined;
  deliveries: () => Deliveries | undefined;
  events: Pick<EventChannel<typeof scheduleEvents>, 'publish'>;
  /** Asks the module handlers (schedulerHooks.handler). */
  runHandler: (job: HandlerRun) => Promise<HandlerOutcome | undefined>;
  config: () => SchedulerConfig;
  log: Logger;
}

export class Dispatcher {
  /** Scheduled runs this copy executes now (their leases are renewed while any is). */
  private active = 0;

  constructor(private readonly deps: DispatchDeps) {}

  get busy(): boolean {
    return this.active > 0;
  }

  /** Runs a job's claimed (or taken over) runs one after another, in slot order (not awaited by the scheduler loop). */
  fire(job: JobRow, runs: readonly Claimed[]): void {
    void (async () => {
      for (const run of runs) await this.run(job, run);
    })();
  }

  /** POST …/run: a run now, on a row without a slot (manual), which leaves the schedule and the failure count alone. */
  async runNow(job: JobRow): Promise<RunReport> {
    const at = Date.now();
    return this.run(job, await this.deps.runs.insertManual(job.id, this.deps.node, at + this.deps.leaseMs, at));
  }

  /** One run on its row: a scheduled one (claimed or taken over) or a manual one. */
  private async run(job: JobRow, run: Held): Promise<RunReport> {
    this.active++;
    const report: RunReport = { status: 'completed', schedule_id: job.id, agent_id: job.agent_id, workflow_id: job.workflow_id };
    try {
      if (job.handler) await this.handler(job, report);
      else if (job.workflow_id) await this.workflow(job, report, run);
      else await this.turn(job, report, run);
    } catch (err) {
      report.status = 'failed';
      report.error = (err as Error).message ?? String(err);
    }
    const ok = report.status === 'completed';
    const config = this.deps.config();
    const failures = job.consecutive_failures + 1;
    const backoffMs = Math.min(config.failure_backoff_secs * 2 ** (failures - 1), config.max_backoff_secs) * 1000;
    const outcome: Outcome = { ok, text: (ok ? report.response : report.error) ?? '', at: Date.now() };
    const scheduled =
      run.slot === null ? undefined : { backoffMs, maxFailures: config.max_consecutive_failures, oneShot: job.kind === 'at' || job.one_shot === 1 };
    try {
      await this.record(job, outcome, run, scheduled);
    } catch (err) {
      this.deps.log.error({ err, job: job.id }, 'could not record a scheduled run');
    } finally {
      this.active--;
    }
    if (!ok) this.deps.log.warn({ job: job.id, name: job.name, error: report.error }, 'scheduled job failed');
    this.deps.events.publish('schedule.fired', { jobId: job.id, name: job.name, agentId: job.agent_id ?? undefined, status: ok ? 'ok' : 'error' });
    return report;
  }

  /**
   * The run row's end and the job's outcome, in one transaction. A run another node took over meanwhile (this one was
   * thought dead) is that node's to record: nothing is written.
   */
  private async record(job: JobRow, outcome: Outcome, run: Held, scheduled: Scheduled | undefined): Promise<void> {
    const { store, jobs, runs, node } = this.deps;
    await store.tx(async (t) => {
      if (!(await runs.end(t, run.id, node, outcome.ok ? 'ok' : 'error', outcome.ok ? null : outcome.text, outcome.at))) return;
      await jobs.recordOutcome(t, job.id, outcome, scheduled);
      await runs.prune(t, job.id);
    });
  }

  private async turn(job: JobRow, report: RunReport, run: Held): Promise<void> {
    if (!job.agent_id) throw new Error('the job has neither an agent nor a workflow');
    const agentId = job.agent_id;
    const timeout = job.timeout_secs ?? this.deps.config().turn_timeout_secs;
    const cause = `scheduled job '${job.name}' (${job.schedule})`;
    let result: Awaited<ReturnType<TaskQueue['runTurn']>>;
    try {
      result = await this.deps.queue().runTurn({
        lane: 'schedule',
        agentId,
        message: job.prompt || `[Scheduled job '${job.name}' triggered]`,
        origin: 'schedule',
        sessionMode: job.session_mode,
        timeoutMs: timeout * 1000,
        // A run taken over from a dead node finds the turn that node queued (the queue runs it once) instead of a second.
        key: slotKey(job, run),
      });
    } catch (err) {
      await this.deps.deliveries()?.deliver({ agentId, source: 'schedule', sourceId: job.id, error: (err as Error).message, cause });
      throw err;
    }
    report.response = result.response;
    await this.deps.deliveries()?.deliver({ agentId, source: 'schedule', sourceId: job.id, sessionId: result.sessionId, response: result.response, cause });
  }

  private async handler(job: JobRow, report: RunReport): Promise<void> {
    const run: HandlerRun = { handler: job.handler!, jobId: job.id, name: job.name, agentId: job.agent_id, input: job.prompt };
    const outcome = await this.deps.queue().run('schedule', () => this.deps.runHandler(run));
    if (!outcome) throw new Error(`no running module handles '${job.handler}'`);
    if (!outcome.ok) throw new Error(outcome.error);
    report.response = outcome.result;
  }

  private async workflow(job: JobRow, report: RunReport, run: Held): Promise<void> {
    const workflows = this.deps.workflows();
    if (!workflows) throw new Error('the workflows module is not running');
    // A run taken over from a dead node finds the workflow run that node started (and its outcome) instead of a second.
    const started = await workflows.start(job.workflow_id!, job.prompt, 'schedule', slotKey(job, run));
    report.run_id = started.run_id;
    const result = await started.done;
    report.response = result.output;
    if (result.status !== 'completed') throw new Error(`workflow run ${result.run_id} ${result.status}: ${result.error ?? ''}`);
  }
}

/** The idempotency key of a scheduled run's work, the same on whichever node runs it; a manual run has none. */
function slotKey(job: JobRow, run: Held): string | undefined {
  return run.slot === null ? undefined : `scheduler:${job.id}:${run.slot}`;
}
