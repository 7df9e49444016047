/** A fixed one-minute window per client address, for the hook routes (stale windows are dropped as they are met). */
export class MinuteWindow {
  private readonly windows = new Map<string, { start: number; count: number }>();

  /** Seconds to wait, or 0 when the request may go on. */
  take(client: string, limit: number, now = Date.now()): number {
    if (this.windows.size > 10_000) this.prune(now);
    const w = this.windows.get(client);
    if (!w || now - w.start >= 60_000) {
      this.windows.set(client, { start: now, count: 1 });
      return 0;
    }
    if (w.count >= limit) return Math.ceil((w.start + 60_000 - now) / 1000);
    w.count++;
    return 0;
  }

  private prune(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(k);
  }
}
