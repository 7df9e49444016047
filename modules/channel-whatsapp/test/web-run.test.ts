// A WhatsApp Web channel running on the fake socket: direct messages answered (typing shown), group mention gating by
// the bot's jid, phone number or LID, or a reply to it; a message Baileys emits again after a reconnect is one journal
// row and one turn; history and own messages are not answered; 515 is a new socket at once, 408 and 428 go through the
// backoff; files both ways (voice notes Ogg/Opus with ptt, other audio a document without the media module); owner
// notices to the owners' numbers; 440 stops keeping the account; 401 stops and forgets it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventChannel, type AgentTestKernel } from '@talon/testing';
import { channelEvents } from '@talon/channels';
import { BOT_LID, BOT_NUMBER, groupJid, userJid, type FakeWhatsApp } from './fixtures/whatsapp-fake-socket/fake-socket.ts';
import { call, channel, configureWeb, fakeOf, signIn, startWebKernel, until, untilState } from './web-helpers.ts';

let k: AgentTestKernel;
let fake: FakeWhatsApp;
let events: ReturnType<typeof eventChannel<typeof channelEvents>>;
/** Every message the channels journal committed (channel.message_received: a duplicate delivery publishes none). */
const received: Array<{ channel: string; chatId: string; senderId: string; platformId: string }> = [];
const OWNER = '+1 555 000-2222';

before(async () => {
  k = await startWebKernel();
  events = eventChannel(k.kernel.events, channelEvents);
  events.subscribe('channel.message_received', (e) => void received.push(e.data));
  await k.spawnAgent('helper');
  fake = fakeOf(k);
  await configureWeb(k, { owners: [OWNER] });
  await signIn(k);
});
after(async () => {
  events?.close();
  await k?.stop();
});

interface Channels {
  send(message: {
    channel: string;
    chatId: string;
    text: string;
    media?: Array<{ mediaType: string; name: string; data: string }>;
  }): Promise<{ messageIds: string[] }>;
  notifyOwners(text: string): Promise<number>;
}
const channels = () => k.kernel.services.view<Channels>('channels.service');
const replies = (jid: string, count: number) =>
  until(() => (fake.textsTo(jid).length >= count ? fake.textsTo(jid) : undefined), `${count} repl(ies) to ${jid}`);
/** The journal's commits of one WhatsApp message, as the channels module announces them. */
const journaled = (platformId: string) =>
  received.filter((m) => m.channel === 'whatsapp' && m.platformId === platformId).map((m) => ({ sender_id: m.senderId, chat_id: m.chatId }));
const authRows = async () =>
  (await k.kernel.store.many<{ key: string }>("SELECT key FROM channel_whatsapp_auth WHERE channel = 'whatsapp'")).map((r) => r.key).sort();

test('web mode loads Baileys (its libsignal among the loaded packages)', () => {
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  assert.ok(
    loaded.some((f) => /[/\\]node_modules[/\\]libsignal[/\\]/.test(f)),
    'Baileys was loaded for the auth codec',
  );
});

test('a direct message is answered through a turn, typing shown while it runs; the sender is its number', async () => {
  k.fake.enqueue({ text: 'hello back', delayMs: 300 });
  const m = fake.inject({ chat: userJid(1), text: 'hello bot', pushName: 'Ana' });
  assert.deepEqual(await replies(userJid(1), 1), ['hello back']);
  assert.match(JSON.stringify(k.fake.requests.at(-1)!.body.messages), /hello bot/);
  assert.ok(
    fake.presences.some((p) => p.type === 'composing' && p.jid === userJid(1)),
    'composing shown',
  );
  assert.deepEqual(await until(() => (journaled(m.key.id!).length > 0 ? journaled(m.key.id!) : undefined), 'the message journaled'), [
    { sender_id: userJid(1).split('@')[0], chat_id: userJid(1) },
  ]);
});

test('in a group only a mention (jid, LID) or a reply to the bot is answered', async () => {
  const group = groupJid(1);
  const asked = k.fake.requests.length;
  fake.inject({ chat: group, from: userJid(2), text: 'just chatting' });
  fake.inject({ chat: group, from: userJid(2), text: 'about @someone', mentions: [userJid(3)] });
  k.fake.enqueue({ text: 'by number' }, { text: 'by lid' }, { text: 'by reply' });
  fake.inject({ chat: group, from: userJid(2), text: `@${BOT_NUMBER} hi`, mentions: [`${BOT_NUMBER}@s.whatsapp.net`] });
  await replies(group, 1);
  fake.inject({ chat: group, from: userJid(2), text: 'hi by lid', mentions: [BOT_LID.replace(':7', '')] });
  await replies(group, 2);
  const quoted = fake.sent.at(-1)!;
  fake.emitMessages([
    {
      key: { remoteJid: group, participant: userJid(2), id: 'REPLY-TO-BOT-1', fromMe: false },
      message: {
        extendedTextMessage: {
          text: 'and one more thing',
          contextInfo: { stanzaId: quoted.id, participant: `${BOT_NUMBER}@s.whatsapp.net`, quotedMessage: { conversation: 'by lid' } },
        },
      },
      messageTimestamp: Math.floor(Date.now() / 1000),
    },
  ]);
  assert.deepEqual(await replies(group, 3), ['by number', 'by lid', 'by reply']);
  await sleep(300);
  assert.equal(k.fake.requests.length, asked + 3, 'the unmentioned messages made no turn');
});

test('a message emitted again after a reconnect is one journal row and one turn', async () => {
  k.fake.enqueue({ text: 'once' });
  const m = fake.inject({ chat: userJid(3), text: 'say it once' });
  await replies(userJid(3), 1);
  fake.close(428);
  await untilState(k, 'connected');
  fake.emitMessages([m]);
  await sleep(500);
  assert.equal(journaled(m.key.id!).length, 1);
  assert.deepEqual(fake.textsTo(userJid(3)), ['once']);
});

test("history (append), the account's own messages and status broadcasts are not answered", async () => {
  const asked = k.fake.requests.length;
  const base = { messageTimestamp: Math.floor(Date.now() / 1000), message: { conversation: 'not for the bot' } };
  fake.emitMessages([{ ...base, key: { remoteJid: userJid(4), id: 'HIST-1', fromMe: false } }], 'append');
  fake.emitMessages([
    { ...base, key: { remoteJid: userJid(4), id: 'OWN-1', fromMe: true } },
    { ...base, key: { remoteJid: 'status@broadcast', participant: userJid(4), id: 'STATUS-1', fromMe: false } },
  ]);
  await sleep(400);
  assert.equal(k.fake.requests.length, asked);
  for (const id of ['HIST-1', 'OWN-1', 'STATUS-1']) assert.deepEqual(journaled(id), [], id);
});

test('515 makes a new socket at once; 408 reconnects through the backoff; messages after each are answered', async () => {
  const before = fake.sockets.length;
  fake.close(515);
  await until(() => (fake.sockets.length === before + 1 && fake.sockets.at(-1)!.opened ? true : undefined), 'the socket made again', 2_000);
  k.fake.enqueue({ text: 'after 515' });
  fake.inject({ chat: userJid(5), text: 'still there?' });
  assert.deepEqual(await replies(userJid(5), 1), ['after 515']);

  fake.close(408);
  await untilState(k, 'connected');
  assert.equal(fake.sockets.length, before + 2);
  k.fake.enqueue({ text: 'after 408' });
  fake.inject({ chat: userJid(5), text: 'and now?' });
  assert.deepEqual(await replies(userJid(5), 2), ['after 515', 'after 408']);
  assert.equal((await channel(k)).last_error, null);
});

test('a file in: an image reaches the model as content', async () => {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
  k.fake.enqueue({ text: 'a pixel' });
  fake.inject({ chat: userJid(6), text: 'what is it?', media: { kind: 'image', mediaType: 'image/png', data: png } });
  assert.deepEqual(await replies(userJid(6), 1), ['a pixel']);
  const seen = JSON.stringify(k.fake.requests.at(-1)!.body.messages);
  assert.ok(seen.includes(png.toString('base64')), 'the image itself');
  assert.match(seen, /what is it\?/);
});

test('files out: a voice note is Ogg/Opus with ptt, its text first; other audio is a document without the media module', async () => {
  const jid = userJid(7);
  const ogg = Buffer.from('OggS-fake-opus');
  await channels().send({
    channel: 'whatsapp',
    chatId: jid,
    text: 'listen',
    media: [{ mediaType: 'audio/ogg', name: 'reply.ogg', data: ogg.toString('base64') }],
  });
  const mp3 = Buffer.from('ID3-fake-mp3');
  await channels().send({ channel: 'whatsapp', chatId: jid, text: '', media: [{ mediaType: 'audio/mpeg', name: 'song.mp3', data: mp3.toString('base64') }] });
  const pdf = Buffer.from('%PDF-1.4');
  await channels().send({
    channel: 'whatsapp',
    chatId: jid,
    text: 'the report',
    media: [{ mediaType: 'application/pdf', name: 'r.pdf', data: pdf.toString('base64') }],
  });
  const sent = fake.sent.filter((s) => s.jid === jid).map((s) => s.content);
  assert.deepEqual(sent, [
    { text: 'listen' },
    { audio: ogg, mimetype: 'audio/ogg; codecs=opus', ptt: true },
    { document: mp3, mimetype: 'audio/mpeg', fileName: 'song.mp3' },
    // The channels module sends this text as a chunk of its own, the file after it.
    { text: 'the report' },
    { document: pdf, mimetype: 'application/pdf', fileName: 'r.pdf' },
  ]);
});

test("owner notices go to the owners' numbers as their chats' jids", async () => {
  assert.equal(await channels().notifyOwners('the disk is full'), 1);
  await until(() => (fake.textsTo('15550002222@s.whatsapp.net').length ? true : undefined), 'the notice');
  assert.deepEqual(fake.textsTo('15550002222@s.whatsapp.net'), ['the disk is full']);
});

test('440 (another session took over) stops the channel with last_error and keeps the account', async () => {
  fake.close(440);
  const c = await untilState(k, 'error');
  assert.match(c.last_error!, /replaced: another WhatsApp Web session/);
  assert.ok((await authRows()).includes('creds'), 'the account is kept');
  const sockets = fake.sockets.length;
  await sleep(1500);
  assert.equal(fake.sockets.length, sockets, 'no reconnect');
  assert.equal((await call(k, 'PUT', '/api/channels/whatsapp/disable')).status, 200);
  assert.equal((await call(k, 'PUT', '/api/channels/whatsapp/enable')).status, 200);
  await untilState(k, 'connected');
});

test('401 (logged out on the phone) stops with last_error and forgets the account; a new sign-in connects again', async () => {
  fake.close(401);
  const c = await untilState(k, 'error');
  assert.equal(c.last_error, 'logged out: sign in again with the QR code');
  await until(async () => ((await authRows()).length === 0 ? true : undefined), 'the stored account cleared');
  assert.equal((await call(k, 'PUT', '/api/channels/whatsapp/disable')).status, 200);
  assert.equal((await call(k, 'PUT', '/api/channels/whatsapp/enable')).status, 200);
  assert.match((await untilState(k, 'error')).last_error!, /not signed in/);
  await signIn(k);
  k.fake.enqueue({ text: 'back' });
  fake.inject({ chat: userJid(8), text: 'are you back?' });
  assert.deepEqual(await replies(userJid(8), 1), ['back']);
});
