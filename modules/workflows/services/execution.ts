/**
 * One workflow run, step by step. `{{input}}` starts as the run input and becomes each executed step's output
 * (skipped steps leave it); `output_var` keeps a step's output for later templates. The modes:
 * - sequential: one turn;
 * - fan_out: consecutive fan_out steps run in parallel (capped) on the same input; afterwards {{input}} is the
 *   last of their outputs in declaration order, and a collect step can gather them all;
 * - collect: gathers the outputs of the fan_out group right before it (see gather()); with an agent, that text is
 *   the step's {{input}}; without one, it is the step's output;
 * - conditional: runs only when its condition holds over {{input}} (condition.ts); else skipped;
 * - loop: up to max_iterations turns, each output the next {{input}}, ending early once the output contains `until`.
 * Error modes apply to every execution (fan_out steps included): fail stops the run, skip records the step as
 * skipped and goes on, retry tries again with a growing, jittered wait and fails the run when the retries run out.
 */
import { HttpError } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry } from '@talon/agents';
import type { TaskQueue } from '@talon/tasks';
import type { WorkflowsConfig } from '../config.ts';
import { holds } from './condition.ts';
import type { Definition, Step } from './definition.ts';
import type { RunStore } from './runs.ts';
import { render, seed } from './template.ts';

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

type Attempt = { ok: true; output: string } | { ok: false; error: string };

export class Execution {
  private input: string;
  private readonly vars: Map<string, string>;
  /** Outputs of the fan_out group that ran just before the current step, in declaration order. */
  private group?: Array<{ name: string; output: string }>;

  constructor(
    private readonly deps: ExecutionDeps,
    private readonly runId: string,
    private readonly def: Definition,
    input: string,
    private readonly signal: AbortSignal,
  ) {
    const seeded = seed(input);
    this.input = seeded.input;
    this.vars = seeded.vars;
  }

  /** Runs every step; resolves to the final {{input}}, rejects with RunStop. */
  async execute(): Promise<string> {
    const steps = this.def.steps;
    for (let i = 0; i < steps.length;) {
      stopIfAborted(this.signal);
      const step = steps[i];
      if (step.mode === 'fan_out') {
        let end = i;
        while (end < steps.length && steps[end].mode === 'fan_out') end++;
        await this.fanOut(i, end);
        i = end;
        continue;
      }
      const gathered = step.mode === 'collect' ? this.gather() : undefined;
      this.group = undefined;
      if (step.mode === 'loop') await this.loop(i);
      else if (step.mode === 'conditional' && !holds(step.condition, this.input)) this.skipped(i, `condition '${step.condition}' did not hold`);
      else if (gathered !== undefined && !step.agent_id && !step.agent_name) this.collected(i, gathered);
      else await this.single(i, gathered ?? this.input);
      i++;
    }
    return this.input;
  }

  private async single(i: number, input: string): Promise<void> {
    const step = this.def.steps[i];
    const result = await this.attempt(i, this.prompt(step, input), null, this.signal);
    if (result.ok) this.accept(step, result.output);
    else this.failUnlessSkipped(step, result.error);
  }

  private async loop(i: number): Promise<void> {
    const step = this.def.steps[i];
    let current = this.input;
    let produced = false;
    for (let k = 1; k <= step.max_iterations; k++) {
      const result = await this.attempt(i, this.prompt(step, current), k, this.signal);
      if (!result.ok) {
        this.failUnlessSkipped(step, result.error);
        break;
      }
      current = result.output;
      produced = true;
      if (step.until && current.toLowerCase().includes(step.until.toLowerCase())) break;
    }
    if (produced) this.accept(step, current);
  }

  private async fanOut(from: number, to: number): Promise<void> {
    const input = this.input;
    const group = new AbortController();
    const follow = () => group.abort(this.signal.reason);
    this.signal.addEventListener('abort', follow, { once: true });
    const outputs: Array<string | undefined> = [];
    let failure: unknown;
    const work = async (i: number) => {
      const step = this.def.steps[i];
      const result = await this.attempt(i, this.prompt(step, input), null, group.signal);
      if (result.ok) outputs[i - from] = result.output;
      else if (step.error_mode !== 'skip') throw new RunStop('Failed', stepFailure(step, result.error));
    };
    let next = from;
    const worker = async () => {
      while (next < to && !group.signal.aborted) {
        try {
          await work(next++);
        } catch (err) {
          failure ??= err;
          group.abort(err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.config().fan_out_concurrency, to - from) }, worker));
    this.signal.removeEventListener('abort', follow);
    stopIfAborted(this.signal);
    if (failure) throw failure;
    this.group = [];
    for (let i = from; i < to; i++) {
      const output = outputs[i - from];
      if (output === undefined) continue;
      this.group.push({ name: this.def.steps[i].name, output });
      this.accept(this.def.steps[i], output);
    }
  }

  /**
   * What a collect step gathers: each output of the preceding fan_out group as `--- <step name> ---` on a line of its
   * own followed by the output, blocks separated by a blank line. With no fan_out group right before it, {{input}}.
   */
  private gather(): string {
    if (!this.group) return this.input;
    return this.group.map((g) => `--- ${g.name} ---\n${g.output}`).join('\n\n');
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
        return { ok: true, output: result.response };
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

  private prompt(step: Step, input: string): string {
    return render(step.prompt, new Map(this.vars).set('input', input));
  }

  private accept(step: Step, output: string): void {
    this.input = output;
    if (step.output_var) this.vars.set(step.output_var, output);
  }

  private failUnlessSkipped(step: Step, error: string): void {
    if (step.error_mode !== 'skip') throw new RunStop('Failed', stepFailure(step, error));
  }

  private skipped(i: number, why: string): void {
    this.record(i, null, undefined, 'skipped', null, null, why, 0, Date.now());
  }

  private collected(i: number, gathered: string): void {
    this.record(i, null, undefined, 'completed', null, gathered, null, 0, Date.now());
    this.accept(this.def.steps[i], gathered);
  }

  private record(
    i: number,
    iteration: number | null,
    agent: AgentRecord | undefined,
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
      agent_id: agent?.id ?? step.agent_id,
      agent_name: agent?.name ?? step.agent_name,
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
function stopIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  throw signal.reason instanceof RunStop ? signal.reason : new RunStop('Failed', String((signal.reason as Error)?.message ?? signal.reason));
}

function stepFailure(step: Step, error: string): string {
  return `Step '${step.name}' ${error}`;
}

function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return err instanceof HttpError && err.statusCode === 504 ? `${message} (raise the step's timeout_secs when it needs longer)` : message;
}
