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
