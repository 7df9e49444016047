/**
 * Per-channel metrics in the metrics module's registry (GET /api/metrics, Prometheus text): messages received, sent
 * and refused, send failures, the connection state and the journal's backlog. Counts come from this process's own
 * channel events (each process counts what it did); state and backlog are read when scraped. The registry belongs to
 * the metrics module's current copy, so they are registered again when it (re)loads, and removed when this copy stops.
 * Without the metrics module nothing is registered.
 */
import { metricsFactory, metricsRegistry, type MetricsFactory } from '@talon/metrics';
import { channelEvents } from '@talon/channels';
import type { ChannelsContext, ChannelsParts } from './channels.ts';

const PREFIX = 'talon_channel_';
type Counts = Map<string, number>;
/** prom-client's types through the metrics contract: this module does not load prom-client itself. */
type Counter = ReturnType<MetricsFactory['counter']>;
type Metric = Counter | ReturnType<MetricsFactory['gauge']>;
const bump = (counts: Counts, key: string) => void counts.set(key, (counts.get(key) ?? 0) + 1);

/** This process's own counts, by channel (refusals by `channel\0reason`), from its channel events. */
interface Tally {
  received: Counts;
  sent: Counts;
  failed: Counts;
  refused: Counts;
}

export function registerChannelMetrics(ctx: ChannelsContext, parts: Pick<ChannelsParts, 'runtime' | 'journal'>): void {
  const tally = countEvents(ctx);
  /** This copy's metrics, while they are in the metrics module's current registry. */
  let mine: Record<string, Metric> | undefined;
  const inRegistry = () => {
    const registry = ctx.tryUse(metricsRegistry);
    return Object.entries(mine ?? {}).filter(([name, metric]) => registry?.getSingleMetric(name) === metric);
  };
  /** Removes this copy's metrics only: after a hot reload of this module its successor's are in place already. */
  const unregister = () => {
    for (const [name] of inRegistry()) ctx.tryUse(metricsRegistry)?.removeSingleMetric(name);
    mine = undefined;
  };
  const register = () => {
    const registry = ctx.tryUse(metricsRegistry);
    const factory = ctx.tryUse(metricsFactory);
    if (!registry || !factory || (mine && inRegistry().length === Object.keys(mine).length)) return;
    // A predecessor copy of this module (hot reload) may still hold the names: this copy's metrics replace them.
    for (const { name } of registry.getMetricsAsArray()) if (name.startsWith(PREFIX)) registry.removeSingleMetric(name);
    mine = build(factory, tally, parts);
  };

  register();
  ctx.hooks.kernel.module.loaded.tap('channels-metrics', (info) => {
    if (info.id === 'metrics') register();
  });
  ctx.onStop(unregister);
}

function countEvents(ctx: ChannelsContext): Tally {
  const tally: Tally = { received: new Map(), sent: new Map(), failed: new Map(), refused: new Map() };
  const events = ctx.events.of(channelEvents);
  events.subscribe('channel.message_received', (e) => bump(tally.received, e.data.channel));
  events.subscribe('channel.message_sent', (e) => bump(tally.sent, e.data.channel));
  events.subscribe('channel.send_failed', (e) => bump(tally.failed, e.data.channel));
  events.subscribe('channel.message_refused', (e) => bump(tally.refused, `${e.data.channel}\u0000${e.data.reason}`));
  return tally;
}

/** The metrics by name, made for one registry. */
function build(factory: MetricsFactory, tally: Tally, parts: Pick<ChannelsParts, 'runtime' | 'journal'>): Record<string, Metric> {
  const channels = () => parts.runtime.list().map((r) => r.adapter.name);
  const perChannel = (counts: Counts) =>
    function (this: Counter) {
      this.reset();
      for (const channel of channels()) this.inc({ channel }, counts.get(channel) ?? 0);
    };
  const counter = (name: string, help: string, counts: Counts) =>
    factory.counter({ name, help, labelNames: ['channel'] as const, collect: perChannel(counts) });
  return {
    talon_channel_messages_received_total: counter(
      'talon_channel_messages_received_total',
      'Channel messages committed to the journal (a redelivered duplicate is not counted)',
      tally.received,
    ),
    talon_channel_messages_sent_total: counter('talon_channel_messages_sent_total', 'Message chunks the platform accepted', tally.sent),
    talon_channel_send_failures_total: counter(
      'talon_channel_send_failures_total',
      'Message chunks that failed for good or whose outcome is unknown (a 429 wait is not a failure)',
      tally.failed,
    ),
    talon_channel_messages_refused_total: factory.counter({
      name: 'talon_channel_messages_refused_total',
      help: 'Channel messages the access policy refused, by reason',
      labelNames: ['channel', 'reason'] as const,
      collect() {
        this.reset();
        for (const [key, n] of tally.refused) {
          const [channel, reason] = key.split('\u0000');
          this.inc({ channel, reason }, n);
        }
      },
    }),
    talon_channel_connected: factory.gauge({
      name: 'talon_channel_connected',
      help: '1 while the channel is connected to its platform (its own ready signal), else 0',
      labelNames: ['channel'] as const,
      collect() {
        this.reset();
        for (const r of parts.runtime.list()) this.set({ channel: r.adapter.name }, r.state === 'connected' ? 1 : 0);
      },
    }),
    talon_channel_journal_backlog: factory.gauge({
      name: 'talon_channel_journal_backlog',
      help: "The journal's rows by kind: inbound (not yet answered), outbound (queued or sending), failed, unknown",
      labelNames: ['channel', 'kind'] as const,
      async collect() {
        this.reset();
        for (const channel of channels()) {
          for (const [kind, n] of Object.entries(await parts.journal.backlog(channel))) this.set({ channel, kind }, n);
        }
      },
    }),
  };
}
