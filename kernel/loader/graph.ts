import { orderingLinks, type Manifest } from './manifest.ts';

/** `byChoice`: blocked only because a module it needs was disabled on purpose (not because one is broken). */
export type Verdict =
  { state: 'load' } | { state: 'disabled' | 'blocked' | 'failed'; reason: string; byChoice?: boolean };

/** `order`: the modules to load, dependencies first. */
export type Plan = { order: Manifest[]; verdicts: Map<string, Verdict> };

/**
 * Orders modules after what they link to (orderingLinks). A missing hard dependency blocks, a hard cycle fails; an
 * optional link only decides the order.
 */
export function planModules(manifests: Manifest[], isEnabled: (m: Manifest) => boolean): Plan {
  const byName = new Map(manifests.map((m) => [m.name, m]));
  const verdicts = new Map<string, Verdict>();
  for (const m of manifests)
    if (!isEnabled(m)) verdicts.set(m.name, { state: 'disabled', reason: 'disabled in configuration' });
  for (let changed = true; changed;) {
    changed = false;
    for (const m of manifests.filter((m) => !verdicts.has(m.name))) {
      const dep = m.depends.find((d) => !byName.has(d) || verdicts.has(d));
      if (dep === undefined) continue;
      const of = verdicts.get(dep);
      const byChoice = of?.state === 'disabled' || (of?.state === 'blocked' && of.byChoice);
      verdicts.set(m.name, {
        state: 'blocked',
        reason: `depends on '${dep}', which is ${of?.state ?? 'missing'}`,
        byChoice,
      });
      changed = true;
    }
  }
  const left = new Set(manifests.filter((m) => !verdicts.has(m.name)).map((m) => m.name));
  const waitingFor = (m: Manifest, links: Iterable<string>) => [...links].find((d) => d !== m.name && left.has(d));
  const order: Manifest[] = [];
  while (left.size) {
    const pending = [...left].sort().map((n) => byName.get(n)!);
    const hardReady = pending.filter((m) => !waitingFor(m, m.depends));
    if (!hardReady.length) {
      failCycle(pending, (m) => byName.get(waitingFor(m, m.depends)!)!, verdicts);
      break;
    }
    const ready = hardReady.filter((m) => !waitingFor(m, orderingLinks(m)));
    // An optional cycle is broken one module at a time.
    for (const m of ready.length ? ready : hardReady.slice(0, 1)) {
      left.delete(m.name);
      order.push(m);
      verdicts.set(m.name, { state: 'load' });
    }
  }
  return { order, verdicts };
}

/** The named modules plus everything they depend on. */
export function withDependencies(names: readonly string[], manifests: readonly Manifest[]): Set<string> {
  const byName = new Map(manifests.map((m) => [m.name, m]));
  const out = new Set(names);
  // A Set's iteration also visits what is added meanwhile.
  for (const name of out) for (const dep of byName.get(name)?.depends ?? []) out.add(dep);
  return out;
}

/** Every pending module waits for another: walk the hard dependencies to the cycle, fail it and block the rest. */
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
    if (cycle.includes(p.name)) verdicts.set(p.name, { state: 'failed', reason: `dependency cycle: ${text}` });
    else verdicts.set(p.name, { state: 'blocked', reason: `depends on a module in the cycle ${text}` });
  }
}
