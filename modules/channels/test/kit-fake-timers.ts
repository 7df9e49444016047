import type { Timers } from '../kit/timers.ts';

/** Lets every pending promise chain run (several microtask hops) before time moves on. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Timers whose clock moves only when a test calls advance(): due callbacks run in time order. */
export class FakeTimers implements Timers {
  private time = 0;
  private seq = 0;
  private readonly due = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): number {
    this.due.set(++this.seq, { at: this.time + Math.max(0, ms), fn });
    return this.seq;
  }

  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.due.size;
  }

  /** Moves the clock ms forward, running each callback due on the way at its own time. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await settle();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.due) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.due.delete(next[0]);
      this.time = next[1].at;
      next[1].fn();
    }
    this.time = end;
    await settle();
  }
}
