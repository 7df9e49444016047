/** Messages in and out: totals, and how many in the last minute (per-second buckets). */
export class Throughput {
  sent = 0;
  received = 0;
  private readonly buckets = new Map<number, number>();

  count(direction: 'in' | 'out'): void {
    if (direction === 'in') this.received++;
    else this.sent++;
    const second = Math.floor(Date.now() / 1000);
    this.buckets.set(second, (this.buckets.get(second) ?? 0) + 1);
    if (this.buckets.size > 120) this.prune(second);
  }

  perMinute(): number {
    const second = Math.floor(Date.now() / 1000);
    this.prune(second);
    let total = 0;
    for (const n of this.buckets.values()) total += n;
    return total;
  }

  private prune(now: number): void {
    for (const s of this.buckets.keys()) if (s <= now - 60) this.buckets.delete(s);
  }
}
