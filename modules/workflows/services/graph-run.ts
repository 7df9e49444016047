/**
 * A graph workflow's run: each step starts as soon as every step it depends on has completed — not layer by layer —
 * with at most [workflows] fan_out_concurrency steps at once. `{{input}}` is the run input for every step; a step's
 * output is `{{<step name>}}` (and its output_var) for the steps after it. A conditional step tests its condition
 * over its dependencies' outputs (the run input when it has none). A skipped step (condition, error_mode skip) skips
 * the steps that depend on it, recorded with the reason; a failing step under error_mode fail stops the run and the
 * steps still running are cancelled. The output is that of the last step, in declaration order, that completed.
 */
import { holds } from './condition.ts';
import type { Step } from './definition.ts';
import { childController, stopIfAborted, type StepRunner } from './step-runner.ts';

type State = 'waiting' | 'running' | 'completed' | 'skipped';

export async function runGraph(
  runner: StepRunner,
  steps: readonly Step[],
  input: string,
  vars: Map<string, string>,
  signal: AbortSignal,
  concurrency: number,
): Promise<string> {
  stopIfAborted(signal);
  const index = new Map(steps.map((s, i) => [s.name, i]));
  const state: State[] = steps.map(() => 'waiting');
  const outputs: Array<string | undefined> = [];
  const { controller, release } = childController(signal);
  const running = new Set<Promise<void>>();
  let failure: unknown;

  const execute = async (i: number): Promise<State> => {
    const step = steps[i];
    const upstream = step.depends_on.map((d) => outputs[index.get(d)!]!);
    if (step.mode === 'conditional' && !holds(step.condition, upstream.length ? upstream.join('\n\n') : input)) {
      runner.skipped(i, `condition '${step.condition}' did not hold`);
      return 'skipped';
    }
    const produced = await runner.run(i, input, vars, controller.signal);
    if (!produced) return 'skipped';
    outputs[i] = produced.output;
    vars.set(step.name, produced.output);
    if (step.output_var) vars.set(step.output_var, produced.output);
    return 'completed';
  };

  const start = (i: number) => {
    state[i] = 'running';
    const done: Promise<void> = execute(i)
      .then((end) => void (state[i] = end))
      .catch((err: unknown) => {
        failure ??= err;
        controller.abort(err);
      })
      .finally(() => running.delete(done));
    running.add(done);
  };

  /** Starts every step whose dependencies completed (up to the cap); skips, until none is left, those with a skipped one. */
  const schedule = () => {
    for (let changed = true; changed;) {
      changed = false;
      for (const [i, step] of steps.entries()) {
        if (state[i] !== 'waiting') continue;
        const deps = step.depends_on.map((d) => index.get(d)!);
        const skipped = deps.find((d) => state[d] === 'skipped');
        if (skipped !== undefined) {
          state[i] = 'skipped';
          runner.skipped(i, `its dependency '${steps[skipped].name}' was skipped`);
          changed = true;
        } else if (running.size < concurrency && deps.every((d) => state[d] === 'completed')) start(i);
      }
    }
  };

  try {
    schedule();
    while (running.size && failure === undefined) {
      await Promise.race(running);
      if (failure === undefined) schedule();
    }
    await Promise.allSettled(running);
  } finally {
    release();
  }
  stopIfAborted(signal);
  if (failure !== undefined) throw failure;
  const last = state.lastIndexOf('completed');
  return last >= 0 ? outputs[last]! : input;
}
