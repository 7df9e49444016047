/** The channels service: wires the journal, runtime, inbound and outbound, and recovers work after a crash. */
import type { EventChannel, ModuleContext } from '@talon/module-sdk';
import { agentRegistry, agentRunner, sessionStore, uploadFiles } from '@talon/agents';
import { bindingRouter } from '@talon/bindings';
import { commandRegistry } from '@talon/commands';
import { netFetch } from '@talon/net';
import { secretVault } from '@talon/secrets';
import { taskQueue } from '@talon/tasks';
import { channelEvents, channelHooks, type InboundMessage } from '@talon/channels';
import type { ChannelsConfig } from '../config.ts';
import { HANDED_OVER_TOPIC, recovery } from './handover.ts';
import { Inbound } from './inbound.ts';
import { Journal } from './journal.ts';
import { ChannelLeases } from './lease.ts';
import { Outbound } from './outbound.ts';
import { Pairing } from './pairing.ts';
import { SenderRateLimit } from './policy.ts';
import { QrSignIns } from './qr.ts';
import { Runtime } from './runtime.ts';
import { channelsService, sender } from './send.ts';
import { SettingsStore } from './settings.ts';

export type ChannelsContext = ModuleContext<ChannelsConfig>;

/** What the wiring functions share: the module's stores and its events. */
interface Base {
  ctx: ChannelsContext;
  events: EventChannel<typeof channelEvents>;
  journal: Journal;
  settings: SettingsStore;
  pairing: Pairing;
  qr: QrSignIns;
}

export function buildChannels(ctx: ChannelsContext) {
  const base: Base = {
    ctx,
    events: ctx.events.of(channelEvents),
    journal: new Journal(ctx.store, ctx.nodes.id),
    settings: new SettingsStore(
      ctx.store,
      () => ctx.use(secretVault),
      () => ctx.config,
    ),
    pairing: new Pairing(ctx.store, () => ctx.config.pairing_ttl_minutes * 60_000),
    qr: new QrSignIns(),
  };
  // The runtime hands committed messages to inbound, which is built after it (it sends through the runtime).
  let inbound: Inbound | undefined;
  const runtime = wireRuntime(base, (row) => inbound!.handle(row));
  const outbound = wireOutbound(base, runtime);
  const work = (inbound = wireInbound(base, runtime, outbound));
  const { recover } = recovery(ctx, { journal: base.journal, runtime, outbound, inbound: work });
  const sendTo = sender(ctx, { journal: base.journal, runtime, settings: base.settings, inbound: work });
  const service = channelsService(ctx, runtime, sendTo);
  const { journal, settings, pairing, qr, events } = base;
  return { journal, settings, pairing, qr, runtime, outbound, inbound: work, recover, sendTo, service, events };
}

/** The adapters' runtime: a received message is committed, announced and handed to `handle`. */
function wireRuntime({ ctx, events, journal, settings, qr }: Base, handle: Inbound['handle']): Runtime {
  return new Runtime({
    adapters: () => ctx.hooks.get(channelHooks).adapters.call([]),
    settings,
    leases: new ChannelLeases(ctx.store, ctx.nodes),
    changes: ctx.changes,
    net: () => ctx.use(netFetch),
    log: ctx.log,
    signal: ctx.signal,
    emit: async (channel, message) => {
      const id = await journal.receive(channel, normalise(message));
      if (!id) return { duplicate: true };
      events.publish('channel.message_received', { channel, chatId: message.chatId, senderId: message.senderId, platformId: message.platformId });
      void ctx.track(handle({ id, channel, chat_id: message.chatId, thread_id: message.threadId ?? '' }));
      return { duplicate: false };
    },
    onState: (channel, state, error) => {
      if (state === 'connected') events.publish('channel.connected', { channel });
      if (state === 'error') events.publish('channel.disconnected', { channel, error });
    },
    onHalt: (channel, restarting) => qr.end(channel, restarting),
  });
}

/** Sending the journal's chunks over the running connections, counted and announced. */
function wireOutbound({ ctx, events, journal }: Base, runtime: Runtime): Outbound {
  return new Outbound({
    journal,
    connection: (channel) => runtime.get(channel)?.connection,
    onSent: (row, messageId) => {
      const r = runtime.get(row.channel);
      if (r) r.sent++;
      events.publish('channel.message_sent', { channel: row.channel, chatId: row.chat_id, messageId });
    },
    onFailed: (row, state, error) =>
      events.publish('channel.send_failed', { channel: row.channel, chatId: row.chat_id, state: state === 'unknown' ? 'unknown' : 'failed', error }),
    signal: ctx.signal,
  });
}

/** The inbound pipeline: policy, pairing, the agent's turn and its reply. */
function wireInbound({ ctx, events, journal, pairing }: Base, runtime: Runtime, outbound: Outbound): Inbound {
  return new Inbound({
    store: ctx.store,
    journal,
    runtime,
    outbound,
    pairing,
    rateLimit: new SenderRateLimit(() => ctx.config.rate_per_minute),
    registry: () => ctx.use(agentRegistry),
    runner: () => ctx.use(agentRunner),
    sessions: () => ctx.use(sessionStore),
    files: () => ctx.use(uploadFiles),
    queue: () => ctx.use(taskQueue),
    bindings: () => ctx.tryUse(bindingRouter),
    commands: () => ctx.tryUse(commandRegistry),
    notAfterMs: () => ctx.config.not_after_minutes * 60_000,
    onRefused: (row, reason) => events.publish('channel.message_refused', { channel: row.channel, chatId: row.chat_id, senderId: row.sender_id, reason }),
    onPairing: (channel, senderId, senderName) => events.publish('channel.pairing_requested', { channel, senderId, senderName }),
    handOver: (channel) => ctx.changes.note(HANDED_OVER_TOPIC, channel),
    track: (work) => void ctx.track(work),
    log: ctx.log,
    signal: ctx.signal,
  });
}

/** Ids as strings, text as given: adapters hand platform values of several types. */
function normalise(m: InboundMessage): InboundMessage {
  return {
    ...m,
    platformId: String(m.platformId),
    chatId: String(m.chatId),
    senderId: String(m.senderId),
    ...(m.threadId ? { threadId: String(m.threadId) } : {}),
  };
}

export type ChannelsParts = ReturnType<typeof buildChannels>;
