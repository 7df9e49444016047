/**
 * One workflow run. A workflow whose steps name dependencies (depends_on) runs as a graph (graph-run.ts); otherwise
 * step by step: `{{input}}` starts as the run input and becomes each executed step's output (skipped steps leave it);
 * `output_var` keeps a step's output for later templates. The modes:
 * - sequential: one turn;
 * - fan_out: consecutive fan_out steps run in parallel (capped) on the same input; afterwards {{input}} is the
 *   last of their outputs in declaration order;
 * - collect: runs no turn. It gathers the outputs since the previous collect — from the first fan_out step among
 *   them on, so a step before the fan-out never joins the group — as `{"results":[{step, agent, output}]}` JSON text,
 *   which becomes {{input}} and its output_var. With `summarize`, its agent gets one turn over that text instead and
 *   the reply is the step's output;
 * - conditional: runs only when its condition holds over {{input}} (condition.ts); else skipped;
 * - loop: up to max_iterations turns, each output the next {{input}}, ending early once the output contains `until`.
 * Error modes apply to every execution (fan_out steps included): fail stops the run, skip records the step as
 * skipped and goes on, retry tries again with a growing, jittered wait and fails the run when the retries run out.
 */
import { holds } from './condition.ts';
import type { Definition, Step } from './definition.ts';
import { isGraph } from './graph.ts';
import { runGraph } from './graph-run.ts';
import { childController, StepRunner, stopIfAborted, type ExecutionDeps, type Produced } from './step-runner.ts';
import { seed } from './template.ts';

/** An output a later collect step may gather. */
interface Gatherable extends Produced {
  step: string;
  fanOut: boolean;
}

export class Execution {
  private input: string;
  private readonly vars: Map<string, string>;
  private readonly steps: StepRunner;
  /** The outputs produced since the previous collect step, in declaration order within a fan-out group. */
  private sinceCollect: Gatherable[] = [];

  constructor(
    private readonly deps: ExecutionDeps,
    runId: string,
    private readonly def: Definition,
    input: string,
    private readonly signal: AbortSignal,
  ) {
    const seeded = seed(input);
    this.input = seeded.input;
    this.vars = seeded.vars;
    this.steps = new StepRunner(deps, runId, def);
  }

  /** Runs every step; resolves to the run's output, rejects with RunStop. */
  async execute(): Promise<string> {
    if (isGraph(this.def.steps)) return runGraph(this.steps, this.def.steps, this.input, this.vars, this.signal, this.deps.config().fan_out_concurrency);
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
      if (step.mode === 'collect') await this.collect(i);
      else if (step.mode === 'conditional' && !holds(step.condition, this.input)) this.steps.skipped(i, `condition '${step.condition}' did not hold`);
      else this.accept(step, await this.steps.run(i, this.input, this.vars, this.signal));
      i++;
    }
    return this.input;
  }

  private async fanOut(from: number, to: number): Promise<void> {
    const input = this.input;
    const { controller: group, release } = childController(this.signal);
    const produced: Array<Produced | undefined> = [];
    let failure: unknown;
    let next = from;
    const worker = async () => {
      while (next < to && !group.signal.aborted) {
        const i = next++;
        try {
          produced[i - from] = await this.steps.run(i, input, this.vars, group.signal);
        } catch (err) {
          failure ??= err;
          group.abort(err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.config().fan_out_concurrency, to - from) }, worker));
    release();
    stopIfAborted(this.signal);
    if (failure) throw failure;
    for (let i = from; i < to; i++) this.accept(this.def.steps[i], produced[i - from]);
  }

  private async collect(i: number): Promise<void> {
    const step = this.def.steps[i];
    const firstFanOut = this.sinceCollect.findIndex((g) => g.fanOut);
    const results = this.sinceCollect.slice(Math.max(firstFanOut, 0)).map(({ step, agent, output }) => ({ step, agent, output }));
    const gathered = JSON.stringify({ results });
    this.sinceCollect = [];
    if (step.summarize) {
      const summary = await this.steps.run(i, gathered, this.vars, this.signal);
      if (summary) this.keep(step, summary.output);
      return;
    }
    this.steps.completedWithoutTurn(i, gathered);
    this.keep(step, gathered);
  }

  /** A step's output (none when it was skipped) becomes {{input}} and its output_var, and joins the next collect. */
  private accept(step: Step, produced: Produced | undefined): void {
    if (!produced) return;
    this.keep(step, produced.output);
    this.sinceCollect.push({ step: step.name, agent: produced.agent, output: produced.output, fanOut: step.mode === 'fan_out' });
  }

  private keep(step: Step, output: string): void {
    this.input = output;
    if (step.output_var) this.vars.set(step.output_var, output);
  }
}
