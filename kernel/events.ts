import { randomUUID } from 'node:crypto';
import type {
  AnyEvent,
  EventAccess,
  EventType,
  SubscribeOptions,
  SubscriberStats,
  TalonEvent,
  TalonEvents,
} from '@talon/module-sdk';

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
    const subscribe = (
      types: string | readonly string[],
      handler: (event: never) => unknown,
      options: SubscribeOptions = {},
    ) => {
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
