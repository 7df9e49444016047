/**
 * Events: things that happened, published by the module they belong to. A module declares its events in its
 * contract with defineEvents and lists the catalogue in defineModule({ events }); others subscribe through the
 * catalogue (`ctx.events.of(taskEvents)`), which needs its owner declared in module.toml. `custom` events
 * (`{type, data}`) belong to nobody: any module publishes and subscribes to them.
 */

/** Payloads by event name, as a catalogue declares them. */
export type EventMap = Record<string, unknown>;

declare const payloadType: unique symbol;

/** The payload type of one event in a catalogue; made with payload<T>(). */
export interface Payload<T> {
  readonly [payloadType]?: T;
}

/** Marks an event's payload type: `'task.posted': payload<{ taskId: string; title: string }>()`. */
export const payload = <T>(): Payload<T> => ({});

/** A module's events: its name (the only module that may publish them) and their wire names. */
export interface EventCatalogue<E extends EventMap = EventMap> {
  readonly owner: string;
  readonly types: readonly string[];
  /** The payload types; type-level only, never set. */
  readonly payloads?: E;
}

/** The payloads of a catalogue by name (`PayloadsOf<typeof taskEvents>['task.posted']`). */
export type PayloadsOf<C> = C extends EventCatalogue<infer E> ? E : never;

/**
 * Declares the events a module publishes, by their wire names (what SSE, webhooks, triggers and the audit trail
 * show): `defineEvents('tasks', { 'task.posted': payload<{...}>(), ... })`. Export it from the contract.
 */
export function defineEvents<S extends Record<`${string}.${string}`, Payload<unknown>>>(
  owner: string,
  events: S,
): EventCatalogue<{ [K in keyof S]: S[K] extends Payload<infer T> ? T : never }> {
  return Object.freeze({ owner, types: Object.freeze(Object.keys(events)) });
}

export function isEventCatalogue(value: unknown): value is EventCatalogue {
  const c = value as EventCatalogue | null;
  return typeof c === 'object' && c !== null && typeof c.owner === 'string' && Array.isArray(c.types);
}

/** An event as subscribers receive it. */
export interface TalonEvent<K extends string = string, D = unknown> {
  id: string;
  type: K;
  data: D;
  /** ISO time of publication. */
  at: string;
  /** The module that published it. */
  source: string;
  /** Set on an event that another process published: its node id. */
  node?: string;
}

/** The events of catalogue C with names K, as a union discriminated by `type` (narrow with `event.type === ...`). */
export type EventOf<C, K extends keyof PayloadsOf<C> = keyof PayloadsOf<C>> = {
  [P in K & string]: TalonEvent<P, PayloadsOf<C>[P]>;
}[K & string];

/** `custom`: events of no catalogue, for ad-hoc signals (`{type, data}`). */
export interface CustomEvent {
  type: string;
  data: unknown;
}

/** 'task.*' for every event of a catalogue whose name starts with 'task.'. */
export type EventPattern<C> = { [K in keyof PayloadsOf<C> & string]: K extends `${infer P}.${string}` ? `${P}.*` : never }[keyof PayloadsOf<C> & string];

/** The event names a name or pattern stands for. */
export type Matching<C, T extends string> = T extends `${infer P}.*` ? Extract<keyof PayloadsOf<C>, `${P}.${string}`> : Extract<keyof PayloadsOf<C>, T>;

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

/** One catalogue's events seen by a module: the owner publishes them, every declared module may subscribe. */
export interface EventChannel<C> {
  /** Delivers the event to every subscriber of its type, later and in order; never waits. Only the owner may. */
  publish<K extends keyof PayloadsOf<C> & string>(type: K, data: PayloadsOf<C>[K]): TalonEvent<K, PayloadsOf<C>[K]>;
  /**
   * Calls handler for each event of the names or patterns ('task.*': every event of the catalogue so named), one at a
   * time in publication order. A handler that throws or is slow never affects the publisher or other subscribers.
   * Returns the unsubscribe function; subscriptions also end when the module copy stops.
   */
  subscribe<T extends (keyof PayloadsOf<C> & string) | EventPattern<C>>(
    types: T | readonly T[],
    handler: (event: EventOf<C, Matching<C, T>>) => unknown,
    options?: SubscribeOptions,
  ): () => void;
}

export interface EventAccess {
  /**
   * A catalogue's events: the module's own (listed in defineModule({ events })), or those of a module its
   * module.toml declares (depends, optional_depends or consumes). Throws, naming both modules, when undeclared.
   */
  of<C extends EventCatalogue>(catalogue: C): EventChannel<C>;
  /** A `custom` event: any module may publish one. */
  publish(type: 'custom', data: CustomEvent): TalonEvent<'custom', CustomEvent>;
  subscribe(types: 'custom', handler: (event: TalonEvent<'custom', CustomEvent>) => unknown, options?: SubscribeOptions): () => void;
  /**
   * Every event of every module, as data: for observers that pass events on (webhooks, triggers, the audit trail).
   * Needs `all_events = true` in module.toml.
   */
  subscribe(types: '*', handler: (event: TalonEvent) => unknown, options?: SubscribeOptions): () => void;
}

export interface SubscriberStats {
  owner: string;
  types: string[];
  queued: number;
  delivered: number;
  failed: number;
  dropped: number;
}
