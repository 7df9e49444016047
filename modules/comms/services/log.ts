/**
 * Recent comms events (routed messages, agents coming and going, tasks) in a bounded ring, with live listeners
 * for the SSE stream.
 */
import { randomUUID } from 'node:crypto';
import type { EventOf } from '@talon/module-sdk';
import type { agentEvents } from '@talon/agents';
import type { taskEvents } from '@talon/tasks';

export type CommsKind = 'agent_message' | 'agent_spawned' | 'agent_terminated' | 'task_posted' | 'task_claimed' | 'task_completed';

export interface CommsEvent {
  id: string;
  timestamp: string;
  kind: CommsKind;
  source_id: string | null;
  source_name: string | null;
  target_id: string | null;
  target_name: string | null;
  /** At most 200 characters. */
  detail: string;
}

const clip = (text: string) => (text.length > 200 ? `${text.slice(0, 199)}…` : text);

export class CommsLog {
  private readonly ring: CommsEvent[] = [];
  private readonly listeners = new Set<(e: CommsEvent) => void>();

  constructor(private readonly size: () => number) {}

  add(e: Omit<CommsEvent, 'id' | 'timestamp' | 'detail'> & { detail: string; timestamp?: string }): CommsEvent {
    const event: CommsEvent = { id: randomUUID(), timestamp: e.timestamp ?? new Date().toISOString(), ...e, detail: clip(e.detail) };
    this.ring.push(event);
    const excess = this.ring.length - this.size();
    if (excess > 0) this.ring.splice(0, excess);
    for (const fn of this.listeners) fn(event);
    return event;
  }

  /** Newest first. */
  recent(limit: number): CommsEvent[] {
    return this.ring.slice(-limit).reverse();
  }

  get total(): number {
    return this.ring.length;
  }

  /** Message edges seen in the kept history: from → to, with a count. */
  messageEdges(): Array<{ from: string; to: string; count: number }> {
    const edges = new Map<string, { from: string; to: string; count: number }>();
    for (const e of this.ring) {
      if (e.kind !== 'agent_message' || !e.source_id || !e.target_id) continue;
      const key = `${e.source_id}>${e.target_id}`;
      const edge = edges.get(key) ?? { from: e.source_id, to: e.target_id, count: 0 };
      edge.count++;
      edges.set(key, edge);
    }
    return [...edges.values()];
  }

  listen(fn: (e: CommsEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Bus events that belong in the comms log. */
  fromBus(event: EventOf<typeof agentEvents, 'agent.spawned' | 'agent.terminated'> | EventOf<typeof taskEvents>): void {
    const at = event.at;
    switch (event.type) {
      case 'agent.spawned':
        this.add({
          kind: 'agent_spawned',
          timestamp: at,
          source_id: event.data.parentId ?? null,
          source_name: null,
          target_id: event.data.agentId,
          target_name: event.data.name,
          detail: `${event.data.name} spawned`,
        });
        break;
      case 'agent.terminated':
        this.add({
          kind: 'agent_terminated',
          timestamp: at,
          source_id: null,
          source_name: null,
          target_id: event.data.agentId,
          target_name: event.data.name,
          detail: `${event.data.name} terminated`,
        });
        break;
      case 'task.posted':
        this.add({
          kind: 'task_posted',
          timestamp: at,
          source_id: event.data.createdBy ?? null,
          source_name: null,
          target_id: event.data.assignedTo ?? null,
          target_name: null,
          detail: event.data.title,
        });
        break;
      case 'task.claimed':
        this.add({
          kind: 'task_claimed',
          timestamp: at,
          source_id: event.data.agentId,
          source_name: null,
          target_id: null,
          target_name: null,
          detail: event.data.title,
        });
        break;
      case 'task.completed':
        this.add({
          kind: 'task_completed',
          timestamp: at,
          source_id: event.data.agentId ?? null,
          source_name: null,
          target_id: null,
          target_name: null,
          detail: `${event.data.title}: ${event.data.status}`,
        });
        break;
      default:
        break;
    }
  }
}
