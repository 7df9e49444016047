/**
 * XMPP stanzas in and out, without I/O. In: a `<message>` with a body becomes an InboundMessage — a direct chat, a
 * private message from a room occupant, or a room message (`mentioned` when it names the bot's nick as a word, the
 * address "nick: " stripped). Out: a chunk becomes a `<message>` with its body, thread and `<active/>` chat state, with
 * the characters XML 1.0 cannot carry removed (one would make the server close the stream as not-well-formed).
 */
import { randomUUID } from 'node:crypto';
import type { Element } from '@xmpp/client';
import type { InboundMessage, OutboundChunk } from '@talon/channels';

export const NS_CHATSTATES = 'http://jabber.org/protocol/chatstates';
export const NS_SID = 'urn:xmpp:sid:0';
export const NS_DELAY = 'urn:xmpp:delay';
export const NS_MUC = 'http://jabber.org/protocol/muc';

/** What the connection knows when a stanza arrives or goes out. */
export interface XmppView {
  /** The bot's bare JID, lower-cased. */
  self: string;
  /** The bot's nick in the rooms. */
  nick: string;
  /** The joined rooms' bare JIDs, lower-cased. */
  rooms: ReadonlySet<string>;
}

/** A JID split into its bare part (lower-cased: local part and domain compare case-insensitively) and resource. */
export function splitJid(address: string): { bare: string; resource: string } {
  const slash = address.indexOf('/');
  return slash < 0 ? { bare: address.toLowerCase(), resource: '' } : { bare: address.slice(0, slash).toLowerCase(), resource: address.slice(slash + 1) };
}

/** Characters outside XML 1.0's Char production, and the C1 controls, which no chat client shows. */
const NOT_XML = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
export const xmlSafe = (text: string): string => text.replace(NOT_XML, '');

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The nick as a word anywhere in the text (not inside a longer name: "talonbot" does not name "talon"). */
export function namesNick(text: string, nick: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(nick)}(?![\\p{L}\\p{N}_])`, 'iu').test(text);
}

/** "nick: text" or "nick, text" at the start: the address is not part of what was asked. */
function stripAddress(text: string, nick: string): string {
  const m = new RegExp(`^\\s*@?${escapeRegExp(nick)}\\s*[:,]\\s*`, 'iu').exec(text);
  return m ? text.slice(m[0].length) : text;
}

/**
 * The platform id of a message, for the journal's dedup (a message the server sends again after a stream resumption, or
 * from offline storage, keeps its ids). The server's `<stanza-id>` is trusted only when stamped `by` the chat itself
 * (the room, or the bot's own account): a sender could add any other. Else the sender's `<origin-id>` or stanza id,
 * tied to the sender's full JID; a message with no id at all gets a fresh one (no dedup possible).
 */
export function platformIdOf(stanza: Element, by: string): string {
  const from = stanza.attrs.from ?? '';
  const sid = stanza.getChildren('stanza-id', NS_SID).find((s) => splitJid(s.attrs.by ?? '').bare === by && s.attrs.id);
  if (sid) return `sid ${by} ${sid.attrs.id}`;
  const origin = stanza.getChild('origin-id', NS_SID)?.attrs.id ?? stanza.attrs.id;
  return `${from} ${origin || randomUUID()}`;
}

/** The message for the journal, or undefined when the stanza is not one for the bot. */
export function toInbound(stanza: Element, view: XmppView): InboundMessage | undefined {
  if (!stanza.is('message') || stanza.attrs.type === 'error') return undefined;
  const body = stanza.getChildText('body');
  if (body === null) return undefined;
  const from = splitJid(stanza.attrs.from ?? '');
  if (!from.bare) return undefined;
  const inRoom = view.rooms.has(from.bare);
  const isGroup = stanza.attrs.type === 'groupchat';
  if (isGroup && (!inRoom || !from.resource || from.resource === view.nick)) return undefined; // subject, room notice, own echo
  if (!isGroup && from.bare === view.self) return undefined; // a carbon or our own other resource
  let text = xmlSafe(body);
  if (isGroup) text = stripAddress(text, view.nick);
  text = text.trim();
  if (!text) return undefined;
  const thread = stanza.getChildText('thread')?.trim();
  const stamp = stanza.getChild('delay', NS_DELAY)?.attrs.stamp;
  const sentAt = stamp && !Number.isNaN(Date.parse(stamp)) ? new Date(stamp).toISOString() : new Date().toISOString();
  // A room occupant's private message is answered to the occupant's full JID (room/nick): it has no other address.
  const sender = inRoom ? `${from.bare}/${from.resource}` : from.bare;
  return {
    platformId: platformIdOf(stanza, isGroup ? from.bare : view.self),
    chatId: isGroup ? from.bare : sender,
    ...(thread ? { threadId: thread.slice(0, 256) } : {}),
    senderId: sender,
    senderName: inRoom ? from.resource : from.bare,
    text,
    isGroup,
    ...(isGroup ? { mentioned: namesNick(body, view.nick) } : {}),
    sentAt,
  };
}

/** The stanza id of a chunk: derived from its journal row, so a re-sent chunk carries the same id. */
export const stanzaIdOf = (chunk: Pick<OutboundChunk, 'nonce'>): string => `talon-${chunk.nonce}`;

/** The `<message>` of one chunk (an `<active/>` chat state ends the composing shown while the turn ran). */
export function toStanza(xml: typeof import('@xmpp/client').xml, chunk: OutboundChunk, view: XmppView): Element {
  const id = stanzaIdOf(chunk);
  const type = view.rooms.has(chunk.chatId.toLowerCase()) ? 'groupchat' : 'chat';
  return xml(
    'message',
    { to: chunk.chatId, type, id },
    xml('body', null, xmlSafe(chunk.text)),
    ...(chunk.threadId ? [xml('thread', null, xmlSafe(chunk.threadId))] : []),
    xml('active', { xmlns: NS_CHATSTATES }),
    xml('origin-id', { xmlns: NS_SID, id }),
  );
}

/** A chat state notification alone (XEP-0085): `composing` while a turn runs, `paused` once it went quiet. */
export function chatState(
  xml: typeof import('@xmpp/client').xml,
  target: { chatId: string; threadId?: string },
  state: 'composing' | 'paused',
  view: XmppView,
): Element {
  const type = view.rooms.has(target.chatId.toLowerCase()) ? 'groupchat' : 'chat';
  return xml(
    'message',
    { to: target.chatId, type },
    xml(state, { xmlns: NS_CHATSTATES }),
    ...(target.threadId ? [xml('thread', null, xmlSafe(target.threadId))] : []),
    // Not worth storing offline or archiving (XEP-0334).
    xml('no-store', { xmlns: 'urn:xmpp:hints' }),
  );
}
