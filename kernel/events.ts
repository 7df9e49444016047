import { randomUUID } from 'node:crypto';
import type { SubscribeOptions, SubscriberStats, TalonEvent } from '@talon/module-sdk';

interface Subscriber {
  owner: string;
  types: Set<string> | '*';
  handler: (event: TalonEvent) => unknown;
  max: number;
  remote: boolean;
  queue: TalonEvent[];
  draining: boolean;
  active: boolean;
  delivered: number;
  failed: number;
  dropped: number;
}

type Warn = (data: Record<string, unknown>, message: string) => void;

/** A module copy's view of the bus, by event name; the loader adds the checks of who may publish and subscribe what. */
export interface BusScope {
  publish(type: string, data: unknown): TalonEvent;
  /** '*' for every event. */
  subscribe(
    types: '*' | readonly string[],
    handler: (event: TalonEvent) => unknown,
    options?: SubscribeOptions,
  ): () => void;
  commit(): void;
  close(): void;
}

/**
 * The bus. Each subscriber has its own bounded queue and drains it on its own, so delivery is
 * isolated: a throwing handler is logged and the next event follows; a hanging one only holds up
 * its own queue, which overflows into a counted, logged drop rather than growing without end.
 */
export class EventBus {
  private readonly subscribers = new Set<Subscriber>();
  /** Event name → the module that owns it (its catalogue's owner), as the modules declared them. */
  private readonly owners = new Map<string, string>();
  /** Shares each event published here with the other processes (set once the database feed runs). */
  share?: (event: TalonEvent) => void;

  constructor(private readonly warn: Warn) {}

  /** Claims event names for their module on its load; a name another module claimed first is refused. */
  own(owner: string, types: readonly string[]): void {
    const taken = types.find((t) => (this.owners.get(t) ?? owner) !== owner);
    if (taken) throw new Error(`event '${taken}' is owned by module '${this.owners.get(taken)}'`);
    for (const t of types) this.owners.set(t, owner);
  }

  /** A module copy's view: what it subscribes is staged until commit() and ends with close(). */
  scope(owner: string): BusScope {
    const mine = new Set<Subscriber>();
    let committed = false;
    const subscribe: BusScope['subscribe'] = (types, handler, options = {}) => {
      const sub: Subscriber = {
        owner,
        types: types === '*' ? '*' : new Set(types),
        handler,
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
      subscribe,
      commit: () => {
        committed = true;
        for (const sub of mine) sub.active = true;
      },
      close: () => {
        for (const sub of mine) {
          this.subscribers.delete(sub);
          if (sub.queue.length)
            this.warn(
              { subscriber: owner, undelivered: sub.queue.length },
              'event subscriber stopped with events still queued',
            );
        }
        mine.clear();
      },
    };
  }

  publish<K extends string, D>(source: string, type: K, data: D): TalonEvent<K, D> {
    const event: TalonEvent<K, D> = { id: randomUUID(), type, data, at: new Date().toISOString(), source };
    this.deliver(event, false);
    this.share?.(event);
    return event;
  }

  /** An event another process published (`node` set): to the subscribers that asked for remote events. */
  receive(event: TalonEvent): void {
    this.deliver(event, true);
  }

  private deliver(event: TalonEvent, remote: boolean): void {
    const type = event.type;
    for (const sub of this.subscribers) {
      if (!sub.active || (remote && !sub.remote) || (sub.types !== '*' && !sub.types.has(type))) continue;
      if (sub.queue.length >= sub.max) {
        if (sub.dropped++ % 100 === 0)
          this.warn(
            { subscriber: sub.owner, type, dropped: sub.dropped },
            'event subscriber is not keeping up: events dropped',
          );
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
