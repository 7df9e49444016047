import { connections, type Manifest } from './manifest.ts';

/** `byChoice`: blocked only because a module it needs was disabled on purpose (not because one is broken). */
export type Verdict = { state: 'load' } | { state: 'disabled' | 'blocked' | 'failed'; reason: string; byChoice?: boolean };

export interface Plan {
  /** Modules to load, dependencies first. */
  order: Manifest[];
  verdicts: Map<string, Verdict>;
}

/**
 * Orders the enabled modules so that every module comes after its dependencies, hard and optional
 * (and what it consumes). A module whose hard dependency is missing, disabled or not loadable is
 * blocked; a cycle of hard dependencies fails its members; optional links in a cycle only order.
 */
export function planModules(manifests: Manifest[], isEnabled: (m: Manifest) => boolean): Plan {
  const byName = new Map(manifests.map((m) => [m.name, m]));
  const verdicts = new Map<string, Verdict>();
  for (const m of manifests) if (!isEnabled(m)) verdicts.set(m.name, { state: 'disabled', reason: 'disabled in configuration' });
  for (let changed = true; changed;) {
    changed = false;
    for (const m of manifests) {
      const dep = verdicts.has(m.name) ? undefined : m.depends.find((d) => !byName.has(d) || verdicts.has(d));
      if (dep === undefined) continue;
      const of = verdicts.get(dep);
      const byChoice = of?.state === 'disabled' || (of?.state === 'blocked' && of.byChoice);
      verdicts.set(m.name, { state: 'blocked', reason: `depends on '${dep}', which is ${of?.state ?? 'missing'}`, byChoice });
      changed = true;
    }
  }
  const left = new Set(manifests.filter((m) => !verdicts.has(m.name)).map((m) => m.name));
  const waitsFor = (m: Manifest, links: Iterable<string>) => [...links].filter((d) => d !== m.name && left.has(d));
  const order: Manifest[] = [];
  while (left.size) {
    const pending = [...left].sort().map((n) => byName.get(n)!);
    const hardReady = pending.filter((m) => !waitsFor(m, m.depends).length);
    const ready = hardReady.filter((m) => !waitsFor(m, connections(m)).length);
    const next = ready.length ? ready : hardReady.slice(0, 1);
    if (!next.length) {
      failCycle(pending, (m) => byName.get(waitsFor(m, m.depends)[0])!, verdicts);
      break;
    }
    for (const m of next) {
      left.delete(m.name);
      order.push(m);
      verdicts.set(m.name, { state: 'load' });
    }
  }
  return { order, verdicts };
}

/** Every pending module waits for another: walk the hard dependencies to the cycle and fail it. */
function failCycle(pending: Manifest[], firstDep: (m: Manifest) => Manifest, verdicts: Map<string, Verdict>): void {
  const path: string[] = [];
  let m = pending[0];
  while (!path.includes(m.name)) {
    path.push(m.name);
    m = firstDep(m);
  }
  const cycle = [...path.slice(path.indexOf(m.name)), m.name];
  const text = cycle.join(' -> ');
  for (const p of pending) {
    const inCycle = cycle.includes(p.name);
    verdicts.set(
      p.name,
      inCycle ? { state: 'failed', reason: `dependency cycle: ${text}` } : { state: 'blocked', reason: `depends on a module in the cycle ${text}` },
    );
  }
}
