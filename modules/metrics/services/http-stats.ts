import { Histogram, type Registry } from 'prom-client';
import type { HttpResponseEvent } from '@talon/module-sdk';

type Labels = { method: string; route: string; status: string };

interface Entry {
  labels: Labels;
  count: number;
  sum: number;
  /** Requests per bucket (not cumulative), in the order of BUCKETS; slower ones count only in count and sum. */
  buckets: number[];
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Request counts and durations per (method, route pattern, status). Every request passes here, and prom-client's
 * own observe (label validation and hashing per call) cost more than the rest of a health check's metrics: the
 * numbers are kept in a plain map and handed to prom-client when scraped. The route is the pattern, never the raw
 * URL, so the map stays bounded by the routes.
 */
export class HttpStats {
  /** By route, then method and status: lookups without building a key string on every request. */
  private readonly entries = new Map<string, Map<string, Map<number, Entry>>>();
  /** The same entries in the order first seen (prom-client's order of label sets). */
  private readonly seen: Entry[] = [];

  observe(event: HttpResponseEvent): void {
    const route = event.route ?? '(unmatched)';
    let byMethod = this.entries.get(route);
    if (!byMethod) this.entries.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(event.method);
    if (!byStatus) byMethod.set(event.method, (byStatus = new Map()));
    let entry = byStatus.get(event.statusCode);
    if (!entry) {
      entry = { labels: { method: event.method, route, status: String(event.statusCode) }, count: 0, sum: 0, buckets: BUCKETS.map(() => 0) };
      byStatus.set(event.statusCode, entry);
      this.seen.push(entry);
    }
    const seconds = event.durationMs / 1000;
    entry.count++;
    entry.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]) {
        entry.buckets[i]++;
        break;
      }
    }
  }

  values(): Iterable<Entry> {
    return this.seen;
  }
}

const NAME = 'talon_http_request_duration_seconds';
const HELP = 'HTTP request durations by method, route pattern and status code';

/**
 * The histogram of HttpStats, in the shape prom-client's registry reads from its own histograms (getForPromString;
 * get() splays it). The test compares the text with a real prom-client Histogram given the same observations.
 */
export class HttpDurations extends Histogram<keyof Labels> {
  constructor(
    private readonly stats: HttpStats,
    registry: Registry,
  ) {
    super({ name: NAME, help: HELP, labelNames: ['method', 'route', 'status'], buckets: BUCKETS, registers: [registry] });
  }

  async getForPromString() {
    type Value = { labels: Record<string, string | number>; sharedLabels: Labels; value: number; metricName: string; exemplar: null | undefined };
    const values: Value[] = [];
    for (const { labels, count, sum, buckets } of this.stats.values()) {
      let below = 0;
      buckets.forEach((n, i) =>
        values.push({ labels: { le: BUCKETS[i] }, sharedLabels: labels, value: (below += n), metricName: `${NAME}_bucket`, exemplar: null }),
      );
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: `${NAME}_bucket`, exemplar: null },
        { labels: {}, sharedLabels: labels, value: sum, metricName: `${NAME}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: labels, value: count, metricName: `${NAME}_count`, exemplar: undefined },
      );
    }
    return { name: NAME, help: HELP, type: 'histogram', values, aggregator: 'sum' };
  }
}
