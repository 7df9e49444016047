/** Sending from Talon to a channel (test, channel_send, owner notices, background replies), and the channels service. */
import { badRequest, conflict, notFound } from '@talon/module-sdk';
import type { Channels, OutboundMedia } from '@talon/channels';
import type { ChannelsContext } from './channels.ts';
import { handedOver } from './handover.ts';
import type { Inbound } from './inbound.ts';
import type { Journal } from './journal.ts';
import { mediaProblem } from './media.ts';
import { canSend, type Runtime } from './runtime.ts';
import type { SettingsStore } from './settings.ts';

export type SendTo = (channel: string, chatId: string | undefined, text: string, threadId?: string, media?: OutboundMedia[]) => Promise<string[]>;

export interface SendParts {
  journal: Journal;
  runtime: Runtime;
  settings: SettingsStore;
  inbound: Inbound;
}

/** Sends to a chat of a running channel; resolves with the platform ids. */
export function sender(ctx: ChannelsContext, { journal, runtime, settings, inbound }: SendParts): SendTo {
  return async (channel, chatId, text, threadId, media = []) => {
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
    const replyId = await inbound.send(channel, { chatId: target, threadId }, text, media);
    const rows = standby ? await handedOver(ctx, journal, replyId) : await journal.chunks(replyId);
    const failed = rows.find((row) => row.state !== 'sent');
    if (failed) throw Object.assign(new Error(`sending failed: ${failed.error ?? failed.state}`), { statusCode: 502 });
    return rows.map((row) => row.message_id!);
  };
}

/** The `channelService` other modules use. */
export function channelsService(ctx: ChannelsContext, runtime: Runtime, sendTo: SendTo): Channels {
  return {
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
}
