/**
 * IRC lines in and out, without I/O. In: a PRIVMSG becomes an InboundMessage when it is a private message or a channel
 * line addressed to the bot ("<nick>: …" or "<nick>, …", the prefix stripped). Out: a chunk becomes the PRIVMSG texts
 * to write, each within 512 bytes with its command, target, CRLF and the relay prefix, with no control character left
 * (a CR or LF would start a second IRC command; \x01 would make the line a CTCP request in the receivers' clients).
 */
import { randomUUID } from 'node:crypto';
import type { ChannelKit, InboundMessage, OutboundChunk } from '@talon/channels';

/** What the connection knows when a line arrives or goes out. */
export interface IrcView {
  /** The nick the server gave the bot (the configured one, or nick_ when it was in use). */
  nick: string;
  /** The server's case mapping (rfc1459 by default: [ ] \ ~ are the upper case of { } | ^). */
  caseLower(s: string): string;
  isChannel(target: string): boolean;
}

export interface PrivmsgLine {
  nick: string;
  target: string;
  message: string;
  /** IRCv3 message tags; `msgid` where the server assigns message ids. */
  tags: Record<string, string | undefined>;
  /** Server time (IRCv3 server-time), ms since the epoch. */
  time?: number;
}

/** mIRC formatting (bold, colour with its digits, italics, …) and every other control character. */
const FORMATTING = /\x03(?:\d{1,2}(?:,\d{1,2})?)?|\x04(?:[0-9a-fA-F]{6}(?:,[0-9a-fA-F]{6})?)?|[\x00-\x1f\x7f-\x9f]/g;

/**
 * The platform id of a line, for the journal's dedup: IRC has no message ids, so it is the server's IRCv3 `msgid` when
 * there is one (a bouncer replaying a line sends the same id: dropped) and otherwise a fresh id, which means no dedup.
 * IRC never redelivers a line on its own, so nothing arrives twice that a dedup would have caught; a hash of sender,
 * text and time would instead drop a person's second "yes" within the window. The sender's nick comes first, up to a
 * space (no nick holds one), so a reply's `replyTo` names whom to address in the channel, also after a restart.
 */
export function platformIdOf(line: PrivmsgLine): string {
  return `${line.nick} ${line.tags.msgid ?? randomUUID()}`;
}

/** The nick a reply addresses: the first word of the message's platform id. */
export const nickOfPlatformId = (platformId: string | undefined): string | undefined => platformId?.split(' ', 1)[0] || undefined;

/** The message for the journal, or undefined when the line is not for the bot. */
export function toInbound(line: PrivmsgLine, view: IrcView): InboundMessage | undefined {
  if (!line.nick || view.caseLower(line.nick) === view.caseLower(view.nick)) return undefined;
  const isGroup = view.isChannel(line.target);
  let text = line.message.replace(FORMATTING, '');
  if (isGroup) {
    const head = text.slice(0, view.nick.length);
    const mark = text[view.nick.length];
    if (view.caseLower(head) !== view.caseLower(view.nick) || (mark !== ':' && mark !== ',')) return undefined;
    text = text.slice(view.nick.length + 1);
  }
  text = text.trim();
  if (!text) return undefined;
  return {
    platformId: platformIdOf(line),
    // Channel names are case-insensitive: #Talon and #talon are one chat (and one session).
    chatId: isGroup ? view.caseLower(line.target) : line.nick,
    senderId: line.nick,
    senderName: line.nick,
    text,
    isGroup,
    ...(isGroup ? { mentioned: true } : {}),
    sentAt: new Date(line.time ?? Date.now()).toISOString(),
  };
}

/**
 * The PRIVMSG texts of one chunk, in order. A reply in a channel starts with the asker's nick; each line is cut again
 * to this target's exact budget (the chunker's static limit assumes the longest channel and nick, so this rarely cuts).
 */
export function toLines(chunk: OutboundChunk, view: IrcView, kit: Pick<ChannelKit, 'chunkText' | 'ircLimits' | 'measure'>, hostmask?: string): string[] {
  const asker = view.isChannel(chunk.chatId) ? nickOfPlatformId(chunk.replyTo) : undefined;
  const prefix = asker ? `${asker}: ` : '';
  const limits = kit.ircLimits(chunk.chatId, hostmask);
  const budget = { ...limits, max: limits.max - kit.measure(prefix, 'bytes') };
  return chunk.text
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(/\t/g, ' ').replace(FORMATTING, '').trimEnd())
    .filter((line) => line.trim() !== '')
    .flatMap((line) => kit.chunkText(line, budget))
    .map((piece) => prefix + piece);
}
