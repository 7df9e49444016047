/**
 * Workflows as graphs: any step with a non-empty `depends_on` makes the whole workflow a graph, run by
 * graph-run.ts. What makes a graph invalid is refused when the workflow is saved, never found halfway through a run.
 */
import { badRequest } from '@talon/module-sdk';
import type { Step } from './definition.ts';
import { placeholders } from './template.ts';

type GraphStep = Pick<Step, 'name' | 'mode' | 'depends_on' | 'prompt' | 'output_var'>;

export function isGraph(steps: readonly Pick<Step, 'depends_on'>[]): boolean {
  return steps.some((s) => s.depends_on.length > 0);
}

/**
 * Throws 400 naming the step: a duplicate name, a dependency that is no step, a cycle, a fan_out or collect mode
 * (the graph already runs independent steps in parallel), and a step that uses another step's output ({{name}} or
 * its output_var) without running after it — it would read whatever happened to be there.
 */
export function checkGraph(steps: readonly GraphStep[]): void {
  const byName = new Map<string, number>();
  for (const [i, s] of steps.entries()) {
    if (byName.has(s.name)) throw badRequest(`step names must be unique in a workflow with depends_on: '${s.name}' is used twice`);
    if (s.name === 'input') throw badRequest("step name 'input' is reserved for {{input}} in a workflow with depends_on");
    byName.set(s.name, i);
  }
  for (const s of steps) {
    if (s.mode === 'fan_out' || s.mode === 'collect')
      throw badRequest(
        `step '${s.name}': mode ${s.mode} does not apply in a workflow with depends_on (steps that do not depend on each other already run in parallel; a step reads another's output as {{<step name>}})`,
      );
    for (const d of s.depends_on) if (!byName.has(d)) throw badRequest(`step '${s.name}' depends on '${d}', which is no step of this workflow`);
  }
  const cycle = findCycle(steps, byName);
  if (cycle) throw badRequest(`depends_on makes a cycle: ${cycle.join(' → ')}`);
  checkReads(steps, byName);
}

/** A dependency cycle as the names along it (first = last), or undefined. */
function findCycle(steps: readonly GraphStep[], byName: ReadonlyMap<string, number>): string[] | undefined {
  const state = new Array<'open' | 'done' | undefined>(steps.length);
  const path: number[] = [];
  const visit = (i: number): number[] | undefined => {
    if (state[i] === 'done') return undefined;
    if (state[i] === 'open') return [...path.slice(path.indexOf(i)), i];
    state[i] = 'open';
    path.push(i);
    for (const d of steps[i].depends_on) {
      const found = visit(byName.get(d)!);
      if (found) return found;
    }
    path.pop();
    state[i] = 'done';
    return undefined;
  };
  for (let i = 0; i < steps.length; i++) {
    const found = visit(i);
    if (found) return found.map((j) => steps[j].name);
  }
  return undefined;
}

function checkReads(steps: readonly GraphStep[], byName: ReadonlyMap<string, number>): void {
  const producer = new Map<string, number>(byName);
  steps.forEach((s, i) => s.output_var && producer.set(s.output_var, i));
  const ancestors: Array<Set<number> | undefined> = [];
  const ancestorsOf = (i: number): Set<number> => {
    let found = ancestors[i];
    if (!found) {
      found = new Set<number>();
      for (const d of steps[i].depends_on) {
        const j = byName.get(d)!;
        found.add(j);
        for (const k of ancestorsOf(j)) found.add(k);
      }
      ancestors[i] = found;
    }
    return found;
  };
  for (const [i, s] of steps.entries()) {
    for (const name of placeholders(s.prompt)) {
      const from = producer.get(name);
      if (from === undefined || from === i || ancestorsOf(i).has(from)) continue;
      const other = steps[from].name;
      throw badRequest(`step '${s.name}' uses {{${name}}}, the output of step '${other}', but does not run after it: add '${other}' to its depends_on`);
    }
  }
}
