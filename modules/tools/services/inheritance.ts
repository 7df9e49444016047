/**
 * Capability inheritance for agent_spawn: a child may only get what its
 * parent holds. A child entry is covered when the parent has '*', the same
 * entry, or a glob matching it (a child glob must appear verbatim in the
 * parent, since glob containment is not decided here).
 */
import { globMatch } from './globs.ts';

export interface SpawnCapabilities {
  tools: string[];
  network: string[];
  shell: string[];
}

const GLOB_CHARS = /[*?[\]{}!]/;

export function covered(parent: readonly string[], entry: string): boolean {
  if (parent.includes('*') || parent.includes(entry)) return true;
  if (GLOB_CHARS.test(entry)) return false;
  return parent.some((p) => GLOB_CHARS.test(p) && globMatch(p, entry));
}

/** undefined when the child stays within the parent; otherwise the refusal, naming every excess. */
export function inheritanceProblem(parent: SpawnCapabilities, child: SpawnCapabilities): string | undefined {
  const excess: string[] = [];
  for (const kind of ['tools', 'network', 'shell'] as const) {
    const extra = child[kind].filter((e) => !covered(parent[kind], e));
    if (extra.length) excess.push(`${kind} [${extra.join(', ')}]`);
  }
  if (!excess.length) return undefined;
  return `Capability inheritance violation: a spawned agent cannot have capabilities its parent lacks: ${excess.join('; ')}`;
}
