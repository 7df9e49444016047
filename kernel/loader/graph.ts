import { connections, type Manifest } from './manifest.ts';

export type Verdict = { state: 'load' } | { state: 'disabled'; reason: string } | { state: 'blocked'; reason: string } | { state: 'failed'; reason: string };

export interface Plan {
  /** Modules to load, dependencies first. */
  order: Manifest[];
  verdicts: Map<string, Verdict>;
}

/**
 * Orders the enabled modules so that every module comes after its
 * dependencies (hard and optional). A module whose hard dependency is missing,
 * disabled or not loadable is blocked; a cycle fails its members.
 */
export function planModules(manifests: Manifest[], isEnabled: (m: Manifest) => boolean): Plan {
  const byName = new Map(manifests.map((m) => [m.name, m]));
  const verdicts = new Map<string, Verdict>();
  for (const m of manifests) if (!isEnabled(m)) verdicts.set(m.name, { state: 'disabled', reason: 'disabled in configuration' });

  // Blocked propagation: repeat until stable.
  let changed = true;
  while (changed) {
    changed = false;
    for (const m of manifests) {
      if (verdicts.has(m.name)) continue;
      for (const dep of m.depends) {
        const target = byName.get(dep);
        const depVerdict = verdicts.get(dep);
        let reason: string | undefined;
        if (!target) reason = `depends on '${dep}', which is missing`;
        else if (depVerdict?.state === 'disabled') reason = `depends on '${dep}', which is disabled`;
        else if (depVerdict) reason = `depends on '${dep}', which is ${depVerdict.state}`;
        if (reason) {
          verdicts.set(m.name, { state: 'blocked', reason });
          changed = true;
          break;
        }
      }
    }
  }

  const candidates = manifests.filter((m) => !verdicts.has(m.name));
  const names = new Set(candidates.map((m) => m.name));
  const hard = new Map<string, string[]>();
  const soft = new Map<string, string[]>();
  for (const m of candidates) {
    hard.set(
      m.name,
      m.depends.filter((d) => names.has(d) && d !== m.name),
    );
    // Optional dependencies and consumed modules only order: they come first when present.
    soft.set(
      m.name,
      [...connections(m)].filter((d) => names.has(d) && d !== m.name && !m.depends.includes(d)),
    );
  }

  const order: Manifest[] = [];
  const placed = new Set<string>();
  const place = (n: string) => {
    placed.add(n);
    order.push(byName.get(n)!);
    verdicts.set(n, { state: 'load' });
  };
  let remaining = candidates.map((m) => m.name).sort();
  while (remaining.length) {
    const hardReady = remaining.filter((n) => hard.get(n)!.every((d) => placed.has(d)));
    const ready = hardReady.filter((n) => soft.get(n)!.every((d) => placed.has(d)));
    if (ready.length) ready.forEach(place);
    else if (hardReady.length)
      place(hardReady[0]); // optional dependencies in a cycle: they only order, so break it
    else {
      const cycle = findCycle(remaining, hard);
      for (const n of remaining) {
        const inCycle = cycle.includes(n);
        verdicts.set(
          n,
          inCycle
            ? { state: 'failed', reason: `dependency cycle: ${cycle.join(' -> ')}` }
            : { state: 'blocked', reason: `depends on a module in the cycle ${cycle.join(' -> ')}` },
        );
      }
      break;
    }
    remaining = remaining.filter((n) => !placed.has(n));
  }
  return { order, verdicts };
}

function findCycle(nodes: string[], edges: Map<string, string[]>): string[] {
  const pending = new Set(nodes);
  for (const start of nodes) {
    const stack: string[] = [];
    const seen = new Set<string>();
    const walk = (n: string): string[] | undefined => {
      if (stack.includes(n)) return [...stack.slice(stack.indexOf(n)), n];
      if (seen.has(n) || !pending.has(n)) return undefined;
      seen.add(n);
      stack.push(n);
      for (const d of edges.get(n) ?? []) {
        const found = walk(d);
        if (found) return found;
      }
      stack.pop();
      return undefined;
    };
    const cycle = walk(start);
    if (cycle) return cycle;
  }
  return nodes;
}
