/** The stanza rules without a server: mention gating, the platform id's trust, what is ignored, XML-safe bodies. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xml } from '@xmpp/client';
import { namesNick, toInbound, toStanza, xmlSafe, type XmppView } from '../services/stanzas.ts';

const view: XmppView = { self: 'bot@example.org', nick: 'talon', rooms: new Set(['team@muc.example.org']) };
const groupchat = (from: string, body: string, ...extra: ReturnType<typeof xml>[]) =>
  xml('message', { from, type: 'groupchat', id: 'm1' }, xml('body', null, body), ...extra);

describe('xmpp stanzas', () => {
  it('a room line naming the nick as a word is a mention, anywhere in it; a longer name is not', () => {
    assert.equal(toInbound(groupchat('team@muc.example.org/ann', 'talon: status?'), view)?.mentioned, true);
    assert.equal(toInbound(groupchat('team@muc.example.org/ann', 'what does Talon think?'), view)?.mentioned, true);
    assert.equal(toInbound(groupchat('team@muc.example.org/ann', 'talonbot is another bot'), view)?.mentioned, false);
    assert.equal(namesNick('ask\ntalon, please', 'talon'), true);
  });

  it('the address is stripped from the text; the room is the chat and the occupant the sender', () => {
    const m = toInbound(groupchat('team@muc.example.org/ann', 'talon: status?'), view)!;
    assert.deepEqual([m.text, m.chatId, m.senderId, m.senderName, m.isGroup], ['status?', 'team@muc.example.org', 'team@muc.example.org/ann', 'ann', true]);
  });

  it('the bot’s own room echo, the room subject and rooms not joined are ignored', () => {
    assert.equal(toInbound(groupchat('team@muc.example.org/talon', 'talon: hi'), view), undefined);
    assert.equal(toInbound(groupchat('team@muc.example.org', 'topic'), view), undefined);
    assert.equal(toInbound(groupchat('other@muc.example.org/ann', 'talon: hi'), view), undefined);
    assert.equal(
      toInbound(xml('message', { from: 'ann@example.org/x', type: 'chat' }, xml('composing', { xmlns: 'http://jabber.org/protocol/chatstates' })), view),
      undefined,
    );
  });

  it('a stanza-id is trusted only when stamped by the chat itself; else the sender and its id', () => {
    const sid = (by: string) => xml('stanza-id', { xmlns: 'urn:xmpp:sid:0', by, id: 'S1' });
    assert.equal(toInbound(groupchat('team@muc.example.org/ann', 'hi', sid('team@muc.example.org')), view)?.platformId, 'sid team@muc.example.org S1');
    assert.equal(toInbound(groupchat('team@muc.example.org/ann', 'hi', sid('evil@example.org')), view)?.platformId, 'team@muc.example.org/ann m1');
    const dm = xml(
      'message',
      { from: 'Ann@Example.org/phone', type: 'chat', id: 'x' },
      xml('body', null, 'hi'),
      xml('origin-id', { xmlns: 'urn:xmpp:sid:0', id: 'O1' }),
      xml('thread', null, 't1'),
    );
    const m = toInbound(dm, view)!;
    assert.deepEqual([m.platformId, m.chatId, m.threadId, m.isGroup], ['Ann@Example.org/phone O1', 'ann@example.org', 't1', false]);
  });

  it('a chunk goes out with its thread, an active chat state and an id from its journal row; no character XML refuses', () => {
    const s = toStanza(xml, { chatId: 'team@muc.example.org', threadId: 't1', text: 'a\u0000b\u0007c \ud800d', plain: '', nonce: 'row-1' }, view);
    assert.equal(s.attrs.type, 'groupchat');
    assert.equal(s.attrs.id, 'talon-row-1');
    assert.equal(s.getChildText('body'), 'abc d');
    assert.equal(s.getChildText('thread'), 't1');
    assert.ok(s.getChild('active', 'http://jabber.org/protocol/chatstates'));
    assert.equal(xmlSafe('ok 😀'), 'ok 😀');
  });
});
