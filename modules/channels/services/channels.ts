/** The channels service: wires the journal, runtime, inbound and outbound, and recovers work after a crash. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModuleContext } from '@talon/module-sdk';
import { agentRegistry, agentRunner, sessionStore } from '@talon/agents';
import { bindingRouter } from '@talon/bindings';
import { commandRegistry } from '@talon/commands';
import { netFetch } from '@talon/net';
import { secretVault } from '@talon/secrets';
import { taskQueue } from '@talon/tasks';
import { channelEvents, channelHooks, type Channels, type InboundMessage, type OutboundMedia } from '@talon/channels';
import { conflict, badRequest, notFound } from '@talon/module-sdk';
import type { ChannelsConfig } from '../config.ts';
import { Inbound } from './inbound.ts';
import { Journal, type OutboundRow } from './journal.ts';
import { ChannelLeases } from './lease.ts';
import { mediaProblem } from './media.ts';
import { Outbound } from './outbound.ts';
import { Pairing } from './pairing.ts';
import { SenderRateLimit } from './policy.ts';
import { canSend, Runtime } from './runtime.ts';
import { SettingsStore } from './settings.ts';

/** The change-feed topic of chunks queued by a process on standby (key: the channel), for the one running it. */
const HANDED_OVER_TOPIC = 'channels.handed_over';
/** How long a send made on standby waits for the running process to report its outcome. */
const HANDED_OVER_WAIT_MS = 30_000;

export type ChannelsContext = ModuleContext<ChannelsConfig>;

export function buildChannels(ctx: ChannelsContext) {
  const events = ctx.events.of(channelEvents);
  const journal = new Journal(ctx.store, ctx.nodes.id);
  const settings = new SettingsStore(
    ctx.store,
    () => ctx.use(secretVault),
    () => ctx.config,
  );
  const pairing = new Pairing(ctx.store, () => ctx.config.pairing_ttl_minutes * 60_000);
  const notAfterMs = () => ctx.config.not_after_minutes * 60_000;
  let inbound: Inbound | undefined;

  const runtime = new Runtime({
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
      void ctx.track(inbound!.handle({ id, channel, chat_id: message.chatId, thread_id: message.threadId ?? '' }));
      return { duplicate: false };
    },
    onState: (channel, state, error) => {
      if (state === 'connected') events.publish('channel.connected', { channel });
      if (state === 'error') events.publish('channel.disconnected', { channel, error });
    },
  });
  const outbound = new Outbound({
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
  inbound = new Inbound({
    store: ctx.store,
    journal,
    runtime,
    outbound,
    pairing,
    rateLimit: new SenderRateLimit(() => ctx.config.rate_per_minute),
    registry: () => ctx.use(agentRegistry),
    runner: () => ctx.use(agentRunner),
    sessions: () => ctx.use(sessionStore),
    queue: () => ctx.use(taskQueue),
    bindings: () => ctx.tryUse(bindingRouter),
    commands: () => ctx.tryUse(commandRegistry),
    notAfterMs,
    onRefused: (row, reason) => events.publish('channel.message_refused', { channel: row.channel, chatId: row.chat_id, senderId: row.sender_id, reason }),
    onPairing: (channel, senderId, senderName) => events.publish('channel.pairing_requested', { channel, senderId, senderName }),
    handOver: (channel) => ctx.changes.note(HANDED_OVER_TOPIC, channel),
    track: (work) => void ctx.track(work),
    log: ctx.log,
    signal: ctx.signal,
  });
  const work = inbound;

  /** Rows this process may take: those of dead processes (released) and its own from before a restart. */
  async function recover(): Promise<void> {
    for (const row of await journal.open()) {
      if (row.node === null && !(await journal.claim(row.id))) continue;
      void ctx.track(work.handle(row));
    }
    await deliverOrphans();
  }

  /** Queued chunks no process holds (a dead one's, or handed over by one on standby), of the channels running here. */
  async function deliverOrphans(): Promise<void> {
    for (const { reply_id, channel } of await journal.orphanReplies()) {
      if (!runtime.get(channel)?.connection || !(await journal.adoptOrphanChunks(reply_id))) continue;
      const first = (await journal.chunks(reply_id))[0];
      if (first) void ctx.track(outbound.deliver(reply_id, `${first.channel}\u0000${first.chat_id}`));
    }
  }
  ctx.changes.on(HANDED_OVER_TOPIC, (channel) => {
    if (channel && runtime.get(channel)?.connection) void ctx.track(deliverOrphans());
  });

  /** The rows of a reply handed to the process running its channel, once each ended (or the wait did). */
  async function handedOver(replyId: string): Promise<OutboundRow[]> {
    const ended = async () => {
      const rows = await journal.chunks(replyId);
      return rows.every((row) => row.state !== 'queued' && row.state !== 'sending') ? rows : undefined;
    };
    const deadline = Date.now() + HANDED_OVER_WAIT_MS;
    for (let rows = await ended(); ; rows = await ended()) {
      if (rows) return rows;
      if (Date.now() > deadline || ctx.signal.aborted) {
        throw Object.assign(
          new Error(`handed to the process running the channel; not confirmed sent within ${HANDED_OVER_WAIT_MS / 1000} s (see the journal)`),
          {
            statusCode: 504,
          },
        );
      }
      await sleep(100, undefined, { signal: ctx.signal }).catch(() => undefined);
    }
  }

  /** Sends to a chat of a running channel (test, channel_send, background replies); resolves with the platform ids. */
  async function sendTo(channel: string, chatId: string | undefined, text: string, threadId?: string, media: OutboundMedia[] = []): Promise<string[]> {
    const r = runtime.get(channel);
    if (!r) throw notFound(`channel '${channel}' not found`);
    const mediaRefused = mediaProblem(media, r.adapter.capabilities.media);
    if (mediaRefused) throw badRequest(mediaRefused);
    if (!r.settings) r.settings = await settings.get(r.adapter);
    if (!r.settings) throw conflict(`channel '${channel}' is not configured`);
    const target = chatId ?? r.settings.common.default_conversation;
    if (!target) throw badRequest(`no target: give 'to' or set default_conversation of channel '${channel}'`);
    // On standby the rows are handed to the process running the channel: the answer waits for its outcome.
    const standby = r.state === 'standby';
    if (!canSend(r)) throw conflict(`channel '${channel}' is not running${r.lastError ? `: ${r.lastError}` : ''}`);
    const replyId = await work.send(channel, { chatId: target, threadId }, text, media);
    const rows = standby ? await handedOver(replyId) : await journal.chunks(replyId);
    const failed = rows.find((row) => row.state !== 'sent');
    if (failed) throw Object.assign(new Error(`sending failed: ${failed.error ?? failed.state}`), { statusCode: 502 });
    return rows.map((row) => row.message_id!);
  }

  const service: Channels = {
    names: () => runtime.list().map((r) => r.adapter.name),
    send: async (m) => ({ messageIds: await sendTo(m.channel, m.chatId, m.text, m.threadId, m.media) }),
    notifyOwners: async (text) => {
      let reached = 0;
      for (const r of runtime.list()) {
        if (!canSend(r) || !r.settings) continue;
        for (const owner of r.settings.common.owners) {
          await sendTo(r.adapter.name, owner, text).then(
            () => reached++,
            (err: unknown) => ctx.log.warn({ err, channel: r.adapter.name }, 'owner notice not delivered'),
          );
        }
      }
      return reached;
    },
  };

  return { journal, settings, pairing, runtime, outbound, inbound: work, recover, sendTo, service, events };
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
