/**
 * One step of a run, whatever walks the steps (execution.ts in order, graph-run.ts as a graph): its turns (a loop's
 * iterations), its retries with a growing, jittered wait, its error mode, and a recorded row per execution.
 */
import { HttpError } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry } from '@talon/agents';
import type { TaskQueue } from '@talon/tasks';
import type { WorkflowsConfig } from '../config.ts';
import type { Definition, Step } from './definition.ts';
import type { RunStore } from './runs.ts';
import { render } from './template.ts';

/** Ends a run early: a failed step, a cancel, a timeout. `state` is the run's final state. */
export class RunStop extends Error {
  constructor(
    readonly state: 'Failed' | 'Cancelled',
    message: string,
  ) {
    super(message);
  }
}

export interface ExecutionDeps {
  queue: () => TaskQueue;
  registry: () => AgentRegistry;
  runs: RunStore;
  config: () => WorkflowsConfig;
}

/** What an executed step produced, and which agent produced it. */
export interface Produced {
  output: string;
  agent: string;
}

type Attempt = ({ ok: true } & Produced) | { ok: false; error: string };

export class StepRunner {
  constructor(
    private readonly deps: ExecutionDeps,
    private readonly runId: string,
    private readonly def: Definition,
  ) {}

  /**
   * Executes step i on `input` (a loop: up to max_iterations turns, each output the next input, ending early once an
   * output contains `until`). Resolves to what it produced, or undefined when the step failed under error_mode skip;
   * rejects with RunStop when the run must stop.
   */
  async run(i: number, input: string, vars: ReadonlyMap<string, string>, signal: AbortSignal): Promise<Produced | undefined> {
    const step = this.def.steps[i];
    const iterations = step.mode === 'loop' ? step.max_iterations : 1;
    let produced: Produced | undefined;
    for (let k = 1; k <= iterations; k++) {
      const prompt = render(step.prompt, new Map(vars).set('input', produced?.output ?? input));
      const result = await this.attempt(i, prompt, step.mode === 'loop' ? k : null, signal);
      if (!result.ok) {
        if (step.error_mode !== 'skip') throw new RunStop('Failed', stepFailure(step, result.error));
        break;
      }
      produced = { output: result.output, agent: result.agent };
      if (step.mode !== 'loop' || (step.until && result.output.toLowerCase().includes(step.until.toLowerCase()))) break;
    }
    return produced;
  }

  /** A step that ran no turn: skipped with the reason. */
  skipped(i: number, why: string): void {
    this.record(i, null, null, 'skipped', null, null, why, 0, Date.now());
  }

  /** A step that produced its output without a turn (a collect step that does not summarise). */
  completedWithoutTurn(i: number, output: string): void {
    this.record(i, null, null, 'completed', null, output, null, 0, Date.now());
  }

  /** One execution of a step with its retries, recorded; resolves to its outcome, rejects only when the run stops. */
  private async attempt(i: number, prompt: string, iteration: number | null, signal: AbortSignal): Promise<Attempt> {
    const step = this.def.steps[i];
    const started = Date.now();
    const tries = step.error_mode === 'retry' ? step.max_retries + 1 : 1;
    const timeoutSecs = step.timeout_secs ?? this.deps.config().step_timeout_secs;
    let agent: AgentRecord | undefined;
    let error = '';
    let attempts = 0;
    while (attempts < tries) {
      attempts++;
      try {
        agent = this.agentOf(step);
        const result = await this.deps.queue().runTurn({
          lane: 'workflow',
          agentId: agent.id,
          message: prompt,
          origin: 'workflow',
          sessionMode: step.session_mode,
          defaultMode: 'new',
          timeoutMs: timeoutSecs * 1000,
          signal,
        });
        const tokens = { input_tokens: result.inputTokens, output_tokens: result.outputTokens };
        this.record(i, iteration, agent, 'completed', prompt, result.response, null, attempts, started, tokens);
        return { ok: true, output: result.response, agent: agent.name };
      } catch (err) {
        stopIfAborted(signal);
        error = describe(err);
        if (attempts < tries) await this.backoff(step, attempts, signal);
      }
    }
    error = tries > 1 ? `failed after ${tries - 1} retries: ${error}` : `failed: ${error}`;
    this.record(i, iteration, agent, step.error_mode === 'skip' ? 'skipped' : 'failed', prompt, null, error, attempts, started);
    return { ok: false, error };
  }

  private agentOf(step: Step): AgentRecord {
    const registry = this.deps.registry();
    const agent = step.agent_id ? registry.get(step.agent_id) : registry.findByName(step.agent_name ?? '');
    if (!agent) throw new HttpError(404, `agent '${step.agent_id ?? step.agent_name}' not found`);
    return agent;
  }

  private async backoff(step: Step, attempt: number, signal: AbortSignal): Promise<void> {
    const config = this.deps.config();
    const base = step.backoff_ms ?? config.retry_backoff_ms;
    const ms = Math.min(base * 2 ** (attempt - 1), config.max_backoff_ms) * (0.8 + Math.random() * 0.4);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
    stopIfAborted(signal);
  }

  /** `agent` null: the step ran no agent (it names none, or names one it does not use). */
  private record(
    i: number,
    iteration: number | null,
    agent: AgentRecord | null | undefined,
    status: 'completed' | 'failed' | 'skipped',
    prompt: string | null,
    output: string | null,
    error: string | null,
    attempts: number,
    started: number,
    tokens = { input_tokens: 0, output_tokens: 0 },
  ): void {
    const step = this.def.steps[i];
    this.deps.runs.step(this.runId, {
      step_index: i,
      step_name: step.name,
      iteration,
      agent_id: agent === null ? null : (agent?.id ?? step.agent_id),
      agent_name: agent === null ? null : (agent?.name ?? step.agent_name),
      status,
      prompt,
      output,
      error,
      attempts,
      started_at: new Date(started).toISOString(),
      duration_ms: Date.now() - started,
      ...tokens,
    });
  }
}

/** Rejects with the reason the signal was aborted for (a RunStop). */
export function stopIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw signal.reason instanceof RunStop ? signal.reason : new RunStop('Failed', String((signal.reason as Error)?.message ?? signal.reason));
}

/** An AbortController that also aborts when `parent` does (a fan-out group, a graph); `release` unhooks it. */
export function childController(parent: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  const follow = () => controller.abort(parent.reason);
  // A parent already aborted fires no event: the child starts aborted.
  if (parent.aborted) follow();
  else parent.addEventListener('abort', follow, { once: true });
  return { controller, release: () => parent.removeEventListener('abort', follow) };
}

function stepFailure(step: Step, error: string): string {
  return `Step '${step.name}' ${error}`;
}

function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return err instanceof HttpError && err.statusCode === 504 ? `${message} (raise the step's timeout_secs when it needs longer)` : message;
}
