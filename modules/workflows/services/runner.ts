/**
 * Starts and ends runs: the run row, the whole-run timeout, cancellation, the workflow.run_finished event. A run
 * never rejects for a failing step; the result says `failed` with the error.
 */
import { conflict, notFound, type EventAccess } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { WorkflowRunner, WorkflowRunResult } from '@talon/workflows';
import type { WorkflowsConfig } from '../config.ts';
import { Execution } from './execution.ts';
import { RunStop, type ExecutionDeps } from './step-runner.ts';
import type { RunStore } from './runs.ts';
import type { StoredWorkflow, WorkflowStore } from './store.ts';

const MAX_TIMER_MS = 2 ** 31 - 1;

export interface RunnerDeps extends ExecutionDeps {
  store: WorkflowStore;
  runs: RunStore;
  events: Pick<EventAccess, 'publish'>;
  config: () => WorkflowsConfig;
  log: Logger;
}

export class Runner implements WorkflowRunner {
  /** Runs this copy is executing, by run id. */
  private readonly active = new Map<string, AbortController>();
  private readonly inflight = new Map<string, Promise<WorkflowRunResult>>();

  constructor(private readonly deps: RunnerDeps) {}

  find(ref: string): { id: string; name: string } | undefined {
    const wf = this.deps.store.find(ref);
    return wf && { id: wf.id, name: wf.name };
  }

  run(ref: string, input: string, origin: string): Promise<WorkflowRunResult> {
    const wf = this.deps.store.find(ref);
    if (!wf) throw notFound(`workflow '${ref}' not found`);
    return this.execute(wf, input, origin);
  }

  execute(wf: StoredWorkflow, input: string, origin: string): Promise<WorkflowRunResult> {
    const runId = this.deps.runs.create(wf, input, origin);
    const done = this.perform(wf, runId, input);
    this.inflight.set(runId, done);
    return done.finally(() => this.inflight.delete(runId));
  }

  private async perform(wf: StoredWorkflow, runId: string, input: string): Promise<WorkflowRunResult> {
    const { runs, config } = this.deps;
    const controller = new AbortController();
    this.active.set(runId, controller);
    const limit = (wf.total_timeout_secs ?? config().run_timeout_secs) * 1000;
    const timer =
      limit > 0 && limit <= MAX_TIMER_MS
        ? setTimeout(() => controller.abort(new RunStop('Failed', `the run exceeded its total timeout of ${limit / 1000}s`)), limit)
        : undefined;
    try {
      runs.start(runId);
      const output = await new Execution(this.deps, runId, wf, input, controller.signal).execute();
      return this.end(wf, runId, 'Completed', output, null);
    } catch (err) {
      if (!(err instanceof RunStop)) this.deps.log.error({ err, runId }, 'workflow run failed unexpectedly');
      const stop = err instanceof RunStop ? err : new RunStop('Failed', (err as Error).message);
      return this.end(wf, runId, stop.state, null, stop.message);
    } finally {
      clearTimeout(timer);
      this.active.delete(runId);
    }
  }

  /** Cancels a run this copy executes and waits for it to end: 404 unknown, 409 already ended. */
  async cancel(runId: string): Promise<void> {
    const controller = this.active.get(runId);
    if (controller) {
      controller.abort(new RunStop('Cancelled', 'cancelled by request'));
      await this.inflight.get(runId);
      return;
    }
    const run = this.deps.runs.get(runId);
    if (!run) throw notFound(`run '${runId}' not found`);
    throw conflict(`run '${runId}' is ${run.state}; only a pending or running run can be cancelled`);
  }

  /** The module is stopping: its runs end as Failed, saying why (never left Running). */
  async stopAll(): Promise<void> {
    for (const controller of this.active.values()) controller.abort(new RunStop('Failed', 'interrupted: the workflows module stopped'));
    await Promise.allSettled([...this.inflight.values()]);
  }

  private end(wf: StoredWorkflow, runId: string, state: 'Completed' | 'Failed' | 'Cancelled', output: string | null, error: string | null): WorkflowRunResult {
    const { runs, events, config } = this.deps;
    runs.finish(runId, state, output, error);
    runs.prune(wf.id, config().runs_kept);
    const status = state.toLowerCase() as WorkflowRunResult['status'];
    events.publish('workflow.run_finished', { workflowId: wf.id, workflowName: wf.name, runId, status, error: error ?? undefined });
    return { run_id: runId, output: output ?? '', status, ...(error === null ? {} : { error }) };
  }
}
