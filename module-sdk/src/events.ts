import { randomUUID } from 'node:crypto';

/**
 * The events modules publish and subscribe to, by type. A module adds its own types by declaration
 * merging (`declare module '@talon/module-sdk' { interface TalonEvents { 'billing.invoiced': {...} } }`);
 * anything else goes out as `custom` with a type and JSON data.
 */
export interface TalonEvents {
  'agent.spawned': { agentId: string; name: string; parentId?: string };
  'agent.terminated': { agentId: string; name: string };
  'agent.crashed': { agentId: string; name: string; error: string };
  'message.received': { agentId: string; sessionId: string; turnId: string; message: string; origin?: string };
  'turn.completed': {
    agentId: string;
    sessionId: string;
    turnId: string;
    response: string;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
    origin?: string;
  };
  /** `direct`: POST /api/tools/{name}/invoke, not a call inside a turn. */
  'tool.invoked': { agentId?: string; sessionId?: string; turnId?: string; tool: string; isError: boolean; ms: number; direct?: boolean };
  'memory.updated': { agentId: string; operation: 'set' | 'delete' | 'remember' | 'forget' | string; key?: string; memoryId?: string };
  'task.posted': { taskId: string; title: string; assignedTo?: string; createdBy?: string };
  'task.claimed': { taskId: string; title: string; agentId: string };
  'task.completed': { taskId: string; title: string; agentId?: string; status: 'completed' | 'failed' | 'cancelled'; result?: string };
  'workflow.run_finished': { workflowId: string; workflowName: string; runId: string; status: string; error?: string };
  'schedule.fired': { jobId: string; name: string; agentId?: string; status: string };
  'approval.requested': { approvalId: string; agentId?: string; tool?: string; description?: string };
  'approval.resolved': { approvalId: string; status: string; decidedBy?: string };
  custom: { type: string; data: unknown };
}

export type EventType = keyof TalonEvents;

export interface TalonEvent<K extends EventType = EventType> {
  id: string;
  type: K;
  data: TalonEvents[K];
  /** ISO time of publication. */
  at: string;
  /** The module that published it. */
  source: string;
  /** Set on an event that another process published: its node id. */
  node?: string;
}

/** Every event, whatever its type (for subscribers of '*'). */
export type AnyEvent = { [K in EventType]: TalonEvent<K> }[EventType];

export interface SubscribeOptions {
  /** Events waiting for this subscriber beyond this many are dropped (counted and logged). Default 1000. */
  queue?: number;
  /**
   * Also the events published by the other processes that share the database (several processes on one home, a
   * fleet). For observers (live streams, dashboards): a subscriber that acts on an event (runs a turn, sends a
   * delivery) keeps the default, so that each event is acted on once, by the process where it happened.
   */
  remote?: boolean;
}

export interface EventAccess {
  /** Delivers the event to every subscriber of its type, later and in order; never throws, never waits. */
  publish<K extends EventType>(type: K, data: TalonEvents[K]): TalonEvent<K>;
  /**
   * Calls handler for each event of the types ('*' for all), one at a time in publication order. A
   * handler that throws or is slow never affects the publisher or other subscribers. Returns the
   * unsubscribe function; subscriptions also end when the module copy stops.
   */
  subscribe<K extends EventType>(types: K | readonly K[], handler: (event: TalonEvent<K>) => unknown, options?: SubscribeOptions): () => void;
  subscribe(types: '*', handler: (event: AnyEvent) => unknown, options?: SubscribeOptions): () => void;
}

export interface SubscriberStats {
  owner: string;
  types: string[];
  queued: number;
  delivered: number;
  failed: number;
  dropped: number;
}

interface Subscriber {
  owner: string;
  types: Set<string> | '*';
  handler: (event: AnyEvent) => unknown;
  max: number;
  remote: boolean;
  queue: AnyEvent[];
  draining: boolean;
  active: boolean;
  delivered: number;
  failed: number;
  dropped: number;
}

type Warn = (data: Record<string, unknown>, message: string) => void;

/**
 * The bus. Each subscriber has its own bounded queue and drains it on its own, so delivery is
 * isolated: a throwing handler is logged and the next event follows; a hanging one only holds up
 * its own queue, which overflows into a counted, logged drop rather than growing without end.
 */
export class EventBus {
  private readonly subscribers = new Set<Subscriber>();
  /** Shares each event published here with the other processes (set once the database feed runs). */
  share?: (event: AnyEvent) => void;

  constructor(private readonly warn: Warn) {}

  /** A module copy's view: what it subscribes is staged until commit() and ends with close(). */
  scope(owner: string): EventAccess & { commit(): void; close(): void } {
    const mine = new Set<Subscriber>();
    let committed = false;
    const subscribe = (types: string | readonly string[], handler: (event: never) => unknown, options: SubscribeOptions = {}) => {
      const sub: Subscriber = {
        owner,
        types: types === '*' ? '*' : new Set(typeof types === 'string' ? [types] : types),
        handler: handler as Subscriber['handler'],
        max: options.queue ?? 1000,
        remote: options.remote ?? false,
        queue: [],
        draining: false,
        active: committed,
        delivered: 0,
        failed: 0,
        dropped: 0,
      };
      mine.add(sub);
      this.subscribers.add(sub);
      return () => {
        mine.delete(sub);
        this.subscribers.delete(sub);
      };
    };
    return {
      publish: (type, data) => this.publish(owner, type, data),
      subscribe: subscribe as EventAccess['subscribe'],
      commit: () => {
        committed = true;
        for (const sub of mine) sub.active = true;
      },
      close: () => {
        for (const sub of mine) {
          this.subscribers.delete(sub);
          if (sub.queue.length) this.warn({ subscriber: owner, undelivered: sub.queue.length }, 'event subscriber stopped with events still queued');
        }
        mine.clear();
      },
    };
  }

  publish<K extends EventType>(source: string, type: K, data: TalonEvents[K]): TalonEvent<K> {
    const event = { id: randomUUID(), type, data, at: new Date().toISOString(), source } as TalonEvent<K>;
    this.deliver(event as AnyEvent, false);
    this.share?.(event as AnyEvent);
    return event;
  }

  /** An event another process published (`node` set): to the subscribers that asked for remote events. */
  receive(event: AnyEvent): void {
    this.deliver(event, true);
  }

  private deliver(event: AnyEvent, remote: boolean): void {
    const type = event.type;
    for (const sub of this.subscribers) {
      if (!sub.active || (remote && !sub.remote) || (sub.types !== '*' && !sub.types.has(type))) continue;
      if (sub.queue.length >= sub.max) {
        if (sub.dropped++ % 100 === 0) this.warn({ subscriber: sub.owner, type, dropped: sub.dropped }, 'event subscriber is not keeping up: events dropped');
        continue;
      }
      sub.queue.push(event);
      if (!sub.draining) void this.drain(sub);
    }
  }

  stats(): SubscriberStats[] {
    return [...this.subscribers].map((s) => ({
      owner: s.owner,
      types: s.types === '*' ? ['*'] : [...s.types],
      queued: s.queue.length,
      delivered: s.delivered,
      failed: s.failed,
      dropped: s.dropped,
    }));
  }

  private async drain(sub: Subscriber): Promise<void> {
    sub.draining = true;
    // Delivery starts on a later turn: the publisher's code runs on first, whatever the handlers do.
    await new Promise((resolve) => setImmediate(resolve));
    while (sub.queue.length && this.subscribers.has(sub)) {
      const event = sub.queue.shift()!;
      try {
        await sub.handler(event);
        sub.delivered++;
      } catch (err) {
        sub.failed++;
        this.warn({ err, subscriber: sub.owner, type: event.type }, 'event subscriber failed; next event follows');
      }
    }
    sub.draining = false;
  }
}
