/** The IRC adapter as the channels module sees it: its fields, what IRC can do, and its line limit. */
import type * as IrcFramework from 'irc-framework';
import type { ChannelAdapter, ChannelKit, ChannelLimits } from '@talon/channels';
import { ircFields, ircSettings } from '../config.ts';
import { startIrc, type IrcTuning } from './connection.ts';

/** The longest channel name (50 bytes) and "<nick>: " for the longest nick (30): the chunker's budget fits any target. */
const WORST_TARGET = '#'.padEnd(50, 'x');
const WORST_ADDRESS_BYTES = 30 + 2;

export function ircLimits(kit: ChannelKit): ChannelLimits {
  return { maxLength: kit.ircLimits(WORST_TARGET).max - WORST_ADDRESS_BYTES, unit: 'bytes', maxLines: 1, format: 'plain' };
}

export function ircAdapter(kit: ChannelKit, irc: () => typeof IrcFramework, tuning: () => IrcTuning): ChannelAdapter {
  return {
    name: 'irc',
    description: 'IRC (irc-framework): channel lines addressed to the bot’s nick and private messages',
    fields: ircFields,
    secretFields: [],
    urlFields: [],
    // No threads, media, typing or edits on plain IRC; a PRIVMSG carries no nonce a server would deduplicate.
    capabilities: { threads: false, media: false, typing: false, edits: false, qr: false, platformDedup: false },
    limits: ircLimits(kit),
    async start(ctx) {
      return startIrc(ctx, ircSettings(ctx.config, ctx.secrets), kit, irc(), tuning());
    },
  };
}
