/** The inbound line rules without a server: addressing and platform ids (outbound lines are tested on ngircd). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nickOfPlatformId, toInbound, type IrcView } from '../services/lines.ts';

const view: IrcView = {
  nick: 'talonbot',
  caseLower: (s) => s.toLowerCase().replace(/\[/g, '{').replace(/\]/g, '}').replace(/\\/g, '|').replace(/~/g, '^'),
  isChannel: (t) => t.startsWith('#') || t.startsWith('&'),
};
const line = (target: string, message: string, extra: Partial<{ nick: string; tags: Record<string, string> }> = {}) => ({
  nick: 'alice',
  target,
  message,
  tags: {},
  ...extra,
});

test('channel lines count only with "<nick>:" or "<nick>," first, in the server\'s case mapping', () => {
  assert.equal(toInbound(line('#t', 'hello talonbot: hi'), view), undefined);
  assert.equal(toInbound(line('#t', 'talonbotx: hi'), view), undefined);
  assert.equal(toInbound(line('#t', 'talonbot hi'), view), undefined);
  assert.equal(toInbound(line('#t', 'talonbot:'), view), undefined, 'nothing asked');
  assert.equal(toInbound(line('#T', 'TALONBOT: hi'), view)?.chatId, '#t');
  const m = toInbound(line('#t', 'TalonBot,   what \x0304now\x03?'), view);
  assert.equal(m?.text, 'what now?');
  assert.equal(m?.isGroup, true);
  assert.equal(m?.mentioned, true);
  const brackets = toInbound(line('#t', '{bot}: x'), { ...view, nick: '[bot]' });
  assert.equal(brackets?.text, 'x');
});

test("private messages need no prefix; the bot's own lines are ignored", () => {
  const m = toInbound(line('talonbot', 'hi'), view);
  assert.deepEqual([m?.chatId, m?.senderId, m?.isGroup, m?.text], ['alice', 'alice', false, 'hi']);
  assert.equal(toInbound(line('#t', 'talonbot: me', { nick: 'TalonBot' }), view), undefined);
});

test('the platform id: the server msgid when there is one (a replay dedups), else a fresh id; the nick first', () => {
  assert.equal(toInbound(line('talonbot', 'hi', { tags: { msgid: 'abc' } }), view)?.platformId, 'alice abc');
  const a = toInbound(line('talonbot', 'yes'), view)!.platformId;
  const b = toInbound(line('talonbot', 'yes'), view)!.platformId;
  assert.notEqual(a, b, 'the same line twice is two messages');
  assert.equal(nickOfPlatformId(a), 'alice');
});
