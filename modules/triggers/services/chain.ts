/**
 * Trigger chains: a fired turn makes events of its own (its message, its answer, the tasks it posts, the agents it
 * spawns), which may fire triggers again. While an agent runs a fired turn at depth d — and for a short while after,
 * since events are delivered later — events about that agent count as depth d, and the triggers they fire run at
 * d + 1. The engine stops a chain at max_chain_depth.
 */
import type { KnownEvent } from './known.ts';

/** How long after a fired turn its events still count as part of the chain. */
const LINGER_MS = 30_000;

export class ChainTracker {
  /** Per agent: the depth of each fired turn it runs, and when finished ones stop counting. */
  private readonly turns = new Map<string, Array<{ depth: number; until: number }>>();

  /** A fired turn at `depth` starts for this agent; call the returned function when it ends. */
  enter(agentId: string, depth: number): () => void {
    const entry = { depth, until: Infinity };
    const list = this.turns.get(agentId) ?? [];
    list.push(entry);
    this.turns.set(agentId, list);
    return () => {
      entry.until = Date.now() + LINGER_MS;
    };
  }

  /** The chain depth of an event: 0 when no fired turn caused it. */
  depthOf(event: KnownEvent, now = Date.now()): number {
    let depth = 0;
    for (const agentId of actors(event)) {
      const list = this.turns.get(agentId);
      if (!list) continue;
      const live = list.filter((t) => t.until > now);
      if (live.length) this.turns.set(agentId, live);
      else this.turns.delete(agentId);
      for (const t of live) depth = Math.max(depth, t.depth);
    }
    return depth;
  }
}

/** The agents an event is about or was caused by. */
function actors(event: KnownEvent): string[] {
  const d = event.data as { agentId?: string; parentId?: string; createdBy?: string };
  return [d.agentId, d.parentId, d.createdBy].filter((x): x is string => typeof x === 'string');
}
