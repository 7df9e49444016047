/** The XMPP adapter as the channels module sees it: its fields, what XMPP can do, and its message limit. */
import type * as XmppClient from '@xmpp/client';
import type { ChannelAdapter, ChannelKit, ChannelLimits } from '@talon/channels';
import { xmppFields, xmppSettings } from '../config.ts';
import { startXmpp } from './connection.ts';

/**
 * XMPP sets no body length; servers cap a stanza (prosody: 256 KiB on c2s) and clients render long bodies poorly, so a
 * reply is cut into messages of at most 4,000 characters (16 KB of UTF-8 at most), plain text (XHTML-IM is obsolete).
 */
export const XMPP_LIMITS: ChannelLimits = { maxLength: 4000, unit: 'chars', format: 'plain' };

export function xmppAdapter(kit: ChannelKit, xmpp: () => Promise<typeof XmppClient>): ChannelAdapter {
  return {
    name: 'xmpp',
    description: 'XMPP (@xmpp/client): direct chats and multi-user chat rooms that name the bot’s nick',
    fields: xmppFields,
    secretFields: [],
    urlFields: [],
    // Threads are <thread> ids; typing is chat states (XEP-0085). No media (HTTP upload is not wired), no edits
    // (XEP-0308 corrections are not used), and servers do not drop a repeated stanza id.
    capabilities: { threads: true, media: false, typing: true, edits: false, qr: false, platformDedup: false },
    limits: XMPP_LIMITS,
    async start(ctx) {
      return startXmpp(ctx, xmppSettings(ctx.config, ctx.secrets), kit, await xmpp());
    },
  };
}
