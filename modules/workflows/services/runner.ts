/**
 * Starts and ends runs: the run row, the whole-run timeout, cancellation, the workflow.run_finished event. A run
 * never rejects for a failing step; the result says `failed` with the error.
 */
import { conflict, notFound, type ChangeFeed, type EventChannel, type NodeAccess } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { StartedRun, workflowEvents, WorkflowRunner, WorkflowRunResult } from '@talon/workflows';
import type { WorkflowsConfig } from '../config.ts';
import { Execution } from './execution.ts';
import { RunStop, type ExecutionDeps } from './step-runner.ts';
import type { RunStore } from './runs.ts';
import type { RunWaits } from './run-waits.ts';
import type { StoredWorkflow, WorkflowStore } from './store.ts';

const MAX_TIMER_MS = 2 ** 31 - 1;
/** The change-feed topic that asks the node executing a run to cancel it (the key is the run id). */
export const CANCEL_TOPIC = 'cancel';
/** How long a cancel of a run on another node waits for that node to end it. */
const REMOTE_CANCEL_MS = 10_000;

export interface RunnerDeps extends ExecutionDeps {
  store: WorkflowStore;
  runs: RunStore;
  events: Pick<EventChannel<typeof workflowEvents>, 'publish'>;
  config: () => WorkflowsConfig;
  log: Logger;
  nodes: Pick<NodeAccess, 'id' | 'live'>;
  changes: Pick<ChangeFeed, 'note'>;
  /** Callers waiting for runs another process (or an earlier copy) executes. */
  waits: Pick<RunWaits, 'wait'>;
}

export class Runner implements WorkflowRunner {
  /** Runs this copy is executing, by run id. */
  private readonly active = new Map<string, AbortController>();
  private readonly inflight = new Map<string, Promise<WorkflowRunResult>>();

  constructor(private readonly deps: RunnerDeps) {}

  async find(ref: string): Promise<{ id: string; name: string } | undefined> {
    const wf = await this.deps.store.find(ref);
    return wf && { id: wf.id, name: wf.name };
  }

  async run(ref: string, input: string, origin: string): Promise<WorkflowRunResult> {
    return (await this.start(ref, input, origin)).done;
  }

  async start(ref: string, input: string, origin: string, key?: string): Promise<StartedRun> {
    const wf = await this.deps.store.find(ref);
    if (!wf) throw notFound(`workflow '${ref}' not found`);
    return this.begin(wf, input, origin, key);
  }

  /** Runs a workflow to its end (POST /api/workflows/{id}/run). */
  async execute(wf: StoredWorkflow, input: string, origin: string): Promise<WorkflowRunResult> {
    return (await this.begin(wf, input, origin)).done;
  }

  /** Commits the run's row, then executes it here; a key already kept answers that run instead. */
  private async begin(wf: StoredWorkflow, input: string, origin: string, key?: string): Promise<StartedRun> {
    const { id: runId, created } = await this.deps.runs.create(wf, input, origin, key);
    if (!created) {
      const done = this.inflight.get(runId) ?? this.outcome(runId);
      // A caller that never awaits `done` must not turn the copy's stop (which rejects it) into an unhandled rejection.
      done.catch(() => undefined);
      return { run_id: runId, done };
    }
    const done = this.perform(wf, runId, input).finally(() => this.inflight.delete(runId));
    this.inflight.set(runId, done);
    return { run_id: runId, done };
  }

  /**
   * The result of a run begun elsewhere (another process, or a copy of this module before a reload), from its row once
   * it has ended: the process executing it ends it, or it is failed as interrupted when that process is found gone.
   * Rejects when this copy stops first (the run goes on; no one here follows it any more).
   */
  private async outcome(runId: string): Promise<WorkflowRunResult> {
    const run = await this.deps.waits.wait(runId);
    if (!run) throw notFound(`run '${runId}' was deleted before it ended`);
    return result(runId, run.state as EndState, run.output, run.error);
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
      await runs.start(runId);
      const output = await new Execution(this.deps, runId, wf, input, controller.signal).execute();
      return await this.end(wf, runId, 'Completed', output, null);
    } catch (err) {
      if (!(err instanceof RunStop)) this.deps.log.error({ err, runId }, 'workflow run failed unexpectedly');
      const stop = err instanceof RunStop ? err : new RunStop('Failed', (err as Error).message);
      return await this.end(wf, runId, stop.state, null, stop.message);
    } finally {
      clearTimeout(timer);
      this.active.delete(runId);
    }
  }

  /**
   * Cancels a run and waits for it to end: here when this copy executes it, else the live node executing it is asked
   * (through the change feed) and the wait is for the run's row. 404 unknown, 409 already ended.
   */
  async cancel(runId: string): Promise<void> {
    if (await this.cancelHere(runId)) return;
    const run = await this.deps.runs.get(runId);
    if (!run) throw notFound(`run '${runId}' not found`);
    const open = run.state === 'Pending' || run.state === 'Running';
    if (open && run.node && run.node !== this.deps.nodes.id && (await this.deps.nodes.live()).includes(run.node)) {
      await this.deps.changes.note(CANCEL_TOPIC, runId);
      try {
        await this.deps.waits.wait(runId, AbortSignal.timeout(REMOTE_CANCEL_MS));
        return;
      } catch (err) {
        if ((err as Error).name !== 'TimeoutError') throw err;
        throw conflict(`run '${runId}' runs on another node, which did not end it within ${REMOTE_CANCEL_MS / 1000}s`);
      }
    }
    throw conflict(`run '${runId}' is ${run.state}; only a pending or running run can be cancelled`);
  }

  /** Cancels a run if this copy executes it (also at another node's request); false when it does not. */
  async cancelHere(runId: string): Promise<boolean> {
    const controller = this.active.get(runId);
    if (!controller) return false;
    controller.abort(new RunStop('Cancelled', 'cancelled by request'));
    await this.inflight.get(runId);
    return true;
  }

  /** The module is stopping: its runs end as Failed, saying why (never left Running). */
  async stopAll(): Promise<void> {
    for (const controller of this.active.values()) controller.abort(new RunStop('Failed', 'interrupted: the workflows module stopped'));
    await Promise.allSettled([...this.inflight.values()]);
  }

  private async end(wf: StoredWorkflow, runId: string, state: EndState, output: string | null, error: string | null): Promise<WorkflowRunResult> {
    const { runs, events, config } = this.deps;
    await runs.finish(runId, state, output, error);
    await runs.prune(wf.id, config().runs_kept);
    const ended = result(runId, state, output, error);
    events.publish('workflow.run_finished', { workflowId: wf.id, workflowName: wf.name, runId, status: ended.status, error: error ?? undefined });
    return ended;
  }
}

type EndState = 'Completed' | 'Failed' | 'Cancelled';

function result(runId: string, state: EndState, output: string | null, error: string | null): WorkflowRunResult {
  const status = state.toLowerCase() as WorkflowRunResult['status'];
  return { run_id: runId, output: output ?? '', status, ...(error === null ? {} : { error }) };
}
