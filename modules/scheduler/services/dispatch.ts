/**
 * Runs a job once: an agent turn (in the queue's 'schedule' lane, origin 'schedule') whose reply goes to the
 * deliveries, a workflow run, or a module's handler (scheduler.jobs). Records the outcome on the job, and ends the
 * scheduled run's row in the same transaction, and publishes schedule.fired. Never rejects.
 */
import type { Logger } from 'pino';
import type { EventAccess, Store } from '@talon/module-sdk';
import type { TaskQueue } from '@talon/tasks';
import type { WorkflowRunner } from '@talon/workflows';
import type { Deliveries } from '@talon/triggers';
import type { HandlerOutcome, HandlerRun } from '@talon/scheduler';
import type { SchedulerConfig } from '../config.ts';
import type { JobRow, JobStore, Outcome, Scheduled } from './jobs.ts';
import type { Claimed, RunRows } from './runs.ts';

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
  /** This node: the run rows it ends are its own. */
  node: string;
  queue: () => TaskQueue;
  workflows: () => WorkflowRunner | undefined;
  deliveries: () => Deliveries | undefined;
  events: Pick<EventAccess, 'publish'>;
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

  /**
   * One run: a scheduled one (its run row), or without `run` POST …/run, which leaves the schedule and the failure
   * count as they are.
   */
  async run(job: JobRow, run?: Claimed): Promise<RunReport> {
    if (run) this.active++;
    const report: RunReport = { status: 'completed', schedule_id: job.id, agent_id: job.agent_id, workflow_id: job.workflow_id };
    try {
      if (job.handler) await this.handler(job, report);
      else if (job.workflow_id) await this.workflow(job, report);
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
    const scheduled = run ? { backoffMs, maxFailures: config.max_consecutive_failures, oneShot: job.kind === 'at' || job.one_shot === 1 } : undefined;
    try {
      await this.record(job, outcome, run, scheduled);
    } catch (err) {
      this.deps.log.error({ err, job: job.id }, 'could not record a scheduled run');
    } finally {
      if (run) this.active--;
    }
    if (!ok) this.deps.log.warn({ job: job.id, name: job.name, error: report.error }, 'scheduled job failed');
    this.deps.events.publish('schedule.fired', { jobId: job.id, name: job.name, agentId: job.agent_id ?? undefined, status: ok ? 'ok' : 'error' });
    return report;
  }

  /**
   * The run row's end and the job's outcome, in one transaction. A run another node took over meanwhile (this one was
   * thought dead) is that node's to record: nothing is written.
   */
  private async record(job: JobRow, outcome: Outcome, run: Claimed | undefined, scheduled: Scheduled | undefined): Promise<void> {
    const { store, jobs, runs, node } = this.deps;
    await store.tx(async (t) => {
      if (run && !(await runs.end(t, run.id, node, outcome.ok ? 'ok' : 'error', outcome.ok ? null : outcome.text, outcome.at))) return;
      await jobs.recordOutcome(t, job.id, outcome, scheduled);
      if (run) await runs.prune(t, job.id);
    });
  }

  private async turn(job: JobRow, report: RunReport, run: Claimed | undefined): Promise<void> {
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
        key: run && `scheduler:${job.id}:${run.slot}`,
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

  private async workflow(job: JobRow, report: RunReport): Promise<void> {
    const workflows = this.deps.workflows();
    if (!workflows) throw new Error('the workflows module is not running');
    const result = await this.deps.queue().run('schedule', () => workflows.run(job.workflow_id!, job.prompt, 'schedule'));
    report.run_id = result.run_id;
    report.response = result.output;
    if (result.status !== 'completed') throw new Error(`workflow run ${result.run_id} ${result.status}: ${result.error ?? ''}`);
  }
}
