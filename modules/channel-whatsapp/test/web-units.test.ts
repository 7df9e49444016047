// WhatsApp Web's parts on their own: messages read (wrappers, groups and mentions, LIDs, what is skipped), files in,
// chat ids to jids, chunks to messages (voice notes), close codes and send errors classified, the auth store (sealed
// rows, stale writers, the backup), the QR sign-in's bounds, the connection's bound on 515 restarts, and the
// production factory (Baileys itself) against a refused loopback port.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestStore, startAgentTestKernel, waitFor, type AgentTestKernel, type TestStore } from '@talon/testing';
import { channelKit, type AdapterContext, type ChannelKit, type OutboundChunk } from '@talon/channels';
import type { WaCreds, WaMessage, WaSocketFactory } from '@talon/channel-whatsapp';
import { AuthStore } from '../services/web/auth.ts';
import { baileysFactoryFor, baileysLogger, loadCodec, type WaCodec } from '../services/web/baileys.ts';
import { closeAction } from '../services/web/close.ts';
import { startWeb } from '../services/web/connection.ts';
import { downloadFile, MAX_MEDIA_BYTES, readWebMessage, selfJids } from '../services/web/inbound.ts';
import { contentsOf, sendError, toJid } from '../services/web/outbound.ts';
import { startQrSignIn } from '../services/web/qr.ts';
import { BOT_JID, BOT_LID, FakeWhatsApp } from './fixtures/whatsapp-fake-socket/fake-socket.ts';
import { MODULES } from './helpers.ts';

const self = selfJids({ id: BOT_JID, lid: BOT_LID });
const dm = (message: Record<string, unknown>, key: Partial<WaMessage['key']> = {}): WaMessage => ({
  key: { remoteJid: '4915100000001@s.whatsapp.net', id: 'M1', fromMe: false, ...key },
  message,
  messageTimestamp: 1_700_000_000,
  pushName: 'Ana',
});
const inGroup = (message: Record<string, unknown>) => dm(message, { remoteJid: '120363000001@g.us', participant: '4915100000002@s.whatsapp.net' });
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

test('a direct text: chat as its jid, sender as the number, name and time', () => {
  assert.deepEqual(readWebMessage(dm({ conversation: 'hi' }), self), {
    message: {
      platformId: 'M1',
      chatId: '4915100000001@s.whatsapp.net',
      senderId: '4915100000001',
      senderName: 'Ana',
      text: 'hi',
      isGroup: false,
      sentAt: new Date(1_700_000_000_000).toISOString(),
    },
  });
});

test("text inside WhatsApp's wrappers, and captions of files", () => {
  const read = (message: Record<string, unknown>) => readWebMessage(dm(message), self);
  assert.equal(read({ ephemeralMessage: { message: { extendedTextMessage: { text: 'disappearing' } } } })?.message.text, 'disappearing');
  const once = read({ viewOnceMessageV2: { message: { imageMessage: { caption: 'look', mimetype: 'image/jpeg', fileLength: 10 } } } });
  assert.deepEqual(once?.media, { kind: 'image', mediaType: 'image/jpeg', size: 10 });
  assert.equal(once?.message.text, 'look');
  const doc = read({
    documentWithCaptionMessage: { message: { documentMessage: { caption: 'the pdf', fileName: 'a.pdf', mimetype: 'application/pdf', fileLength: '123' } } },
  });
  assert.deepEqual(doc?.media, { kind: 'document', mediaType: 'application/pdf', name: 'a.pdf', size: 123 });
  assert.equal(doc?.message.text, 'the pdf');
  assert.deepEqual(read({ audioMessage: { mimetype: 'audio/ogg; codecs=opus', ptt: true } })?.media, { kind: 'audio', mediaType: 'audio/ogg' });
  assert.equal(read({ audioMessage: { mimetype: 'audio/ogg; codecs=opus' } })?.message.text, '');
});

test('what is not answered: own messages, broadcasts, channels, reactions and protocol messages, no id', () => {
  const text = { conversation: 'x' };
  assert.equal(readWebMessage(dm(text, { fromMe: true }), self), undefined);
  assert.equal(readWebMessage(dm(text, { remoteJid: 'status@broadcast', participant: '1@s.whatsapp.net' }), self), undefined);
  assert.equal(readWebMessage(dm(text, { remoteJid: '123@newsletter' }), self), undefined);
  assert.equal(readWebMessage(dm(text, { id: null }), self), undefined);
  assert.equal(readWebMessage(dm({ reactionMessage: { text: '👍' } }), self), undefined);
  assert.equal(readWebMessage(dm({ protocolMessage: { type: 0 } }), self), undefined);
  assert.equal(readWebMessage(dm({ extendedTextMessage: {} }), self), undefined);
  assert.equal(readWebMessage({ ...dm(text), message: null }, self), undefined);
  assert.equal(readWebMessage(dm(text, { remoteJid: '120363000001@g.us' }), self), undefined, 'a group message without its author');
});

test('a LID sender is named by its phone number when WhatsApp gives it, else by the LID', () => {
  assert.equal(
    readWebMessage(dm({ conversation: 'x' }, { remoteJid: '555@lid', remoteJidAlt: '4915100000009@s.whatsapp.net' }), self)?.message.senderId,
    '4915100000009',
  );
  assert.equal(readWebMessage(dm({ conversation: 'x' }, { remoteJid: '555@lid' }), self)?.message.senderId, '555@lid');
  const group = dm({ conversation: 'x' }, { remoteJid: '1@g.us', participant: '777:3@lid', participantAlt: '4915100000010@s.whatsapp.net' });
  assert.equal(readWebMessage(group, self)?.message.senderId, '4915100000010');
});

test("in a group, mentioned by the bot's jid or LID (with or without a device), or by a reply to its message", () => {
  const mentioned = (contextInfo: Record<string, unknown>) =>
    readWebMessage(inGroup({ extendedTextMessage: { text: 't', contextInfo } }), self)?.message.mentioned;
  assert.equal(readWebMessage(inGroup({ conversation: 'plain' }), self)?.message.mentioned, false);
  assert.equal(mentioned({ mentionedJid: ['15550001111@s.whatsapp.net'] }), true);
  assert.equal(mentioned({ mentionedJid: ['98765432100@lid'] }), true);
  assert.equal(mentioned({ mentionedJid: ['4915100000003@s.whatsapp.net'] }), false);
  assert.equal(mentioned({ participant: '15550001111:7@s.whatsapp.net', quotedMessage: { conversation: 'mine' } }), true);
  assert.equal(mentioned({ participant: '4915100000003@s.whatsapp.net', quotedMessage: { conversation: 'theirs' } }), false);
  const caption = readWebMessage(
    inGroup({ imageMessage: { caption: '@bot', mimetype: 'image/png', contextInfo: { mentionedJid: ['15550001111@s.whatsapp.net'] } } }),
    self,
  );
  assert.equal(caption?.message.mentioned, true);
});

test('times: a protobuf Long is read; a time past the last date is dropped', () => {
  const long = { low: 0, high: 0, toNumber: () => 1_700_000_001 };
  assert.equal(readWebMessage({ ...dm({ conversation: 'x' }), messageTimestamp: long }, self)?.message.sentAt, new Date(1_700_000_001_000).toISOString());
  assert.equal(readWebMessage({ ...dm({ conversation: 'x' }), messageTimestamp: 9e15 }, self)?.message.sentAt, undefined);
});

test('files in: downloaded up to the limit; announced larger, larger, or failing: named', async () => {
  const m = dm({});
  let asked = 0;
  const sock = (bytes: Buffer | Error) => ({
    downloadMedia: async () => {
      asked++;
      if (bytes instanceof Error) throw bytes;
      return bytes;
    },
  });
  const ref = { kind: 'document' as const, mediaType: 'text/plain', name: 'n.txt' };
  assert.deepEqual(await downloadFile(sock(Buffer.from('abc')), m, ref, silent), { mediaType: 'text/plain', name: 'n.txt', data: 'YWJj' });
  assert.deepEqual(await downloadFile(sock(Buffer.from('abc')), m, { kind: 'image', mediaType: 'image/png' }, silent), {
    mediaType: 'image/png',
    data: 'YWJj',
  });
  asked = 0;
  assert.deepEqual(await downloadFile(sock(Buffer.from('abc')), m, { ...ref, size: MAX_MEDIA_BYTES + 1 }, silent), { mediaType: 'text/plain', name: 'n.txt' });
  assert.equal(asked, 0, 'not fetched');
  assert.deepEqual(await downloadFile(sock(Buffer.alloc(MAX_MEDIA_BYTES + 1)), m, ref, silent), { mediaType: 'text/plain', name: 'n.txt' });
  const warned: string[] = [];
  const failed = await downloadFile(
    sock(new Error('403 from the media host')),
    m,
    { kind: 'image', mediaType: 'image/jpeg' },
    { warn: (_o, msg) => void warned.push(msg ?? '') },
  );
  assert.deepEqual(failed, { mediaType: 'image/jpeg', name: 'image' });
  assert.equal(warned.length, 1);
});

test('chat ids: a jid as it is, a phone number as its direct chat, anything else refused', () => {
  assert.equal(toJid('120363000001@g.us'), '120363000001@g.us');
  assert.equal(toJid('4915112345678'), '4915112345678@s.whatsapp.net');
  assert.equal(toJid('+1 (555) 000-2222'), '15550002222@s.whatsapp.net');
  assert.throws(
    () => toJid('alice'),
    (err: Error & { kind?: string }) => err.kind === 'permanent' && /neither a jid nor a phone number/.test(err.message),
  );
});

test('chunks out: text, images and videos with captions, voice notes Ogg/Opus with ptt, other files as documents', async () => {
  const chunk = (media?: OutboundChunk['media'], text = 'caption'): OutboundChunk => ({
    chatId: 'c',
    text,
    plain: text,
    nonce: 'n',
    ...(media ? { media } : {}),
  });
  const file = (mediaType: string, name = 'f') => ({ mediaType, name, data: Buffer.from(mediaType).toString('base64') });
  const deps = { log: silent };
  assert.deepEqual(await contentsOf(chunk(), deps), [{ text: 'caption' }]);
  assert.deepEqual(await contentsOf(chunk({ mediaType: 'image/png', name: 'x', url: 'https://x' }), deps), [{ text: 'caption' }], 'a link is in the text');
  assert.deepEqual(await contentsOf(chunk(file('image/png')), deps), [{ image: Buffer.from('image/png'), mimetype: 'image/png', caption: 'caption' }]);
  assert.deepEqual(await contentsOf(chunk(file('video/mp4'), ''), deps), [{ video: Buffer.from('video/mp4'), mimetype: 'video/mp4' }]);
  assert.deepEqual(await contentsOf(chunk(file('audio/ogg; codecs=opus')), deps), [
    { text: 'caption' },
    { audio: Buffer.from('audio/ogg; codecs=opus'), mimetype: 'audio/ogg; codecs=opus', ptt: true },
  ]);
  assert.deepEqual(await contentsOf(chunk(file('audio/mpeg', 'a.mp3'), ''), deps), [
    { document: Buffer.from('audio/mpeg'), mimetype: 'audio/mpeg', fileName: 'a.mp3' },
  ]);
  const converted: Buffer[] = [];
  const toOpus = async (bytes: Buffer) => (converted.push(bytes), Buffer.from('OggS'));
  assert.deepEqual(await contentsOf(chunk(file('audio/mpeg', 'a.mp3'), ''), { ...deps, toOpus }), [
    { audio: Buffer.from('OggS'), mimetype: 'audio/ogg; codecs=opus', ptt: true },
  ]);
  assert.deepEqual(converted, [Buffer.from('audio/mpeg')], 'the media module converted it');
  const failing = async () => Promise.reject(new Error('ffmpeg missing'));
  assert.deepEqual(await contentsOf(chunk(file('audio/wav', 'a.wav'), ''), { ...deps, toOpus: failing }), [
    { document: Buffer.from('audio/wav'), mimetype: 'audio/wav', fileName: 'a.wav' },
  ]);
  assert.deepEqual(await contentsOf(chunk(file('application/pdf', 'r.pdf')), deps), [
    { document: Buffer.from('application/pdf'), mimetype: 'application/pdf', fileName: 'r.pdf', caption: 'caption' },
  ]);
});

test('close codes: 515 restarts at once, 401 logs out, 440/403/411 stop, the rest are retried', () => {
  const close = (statusCode?: number) =>
    closeAction({ connection: 'close', lastDisconnect: { error: Object.assign(new Error('e'), { output: { statusCode } }) } }).kind;
  assert.equal(close(515), 'restart');
  assert.equal(close(401), 'logged_out');
  for (const code of [440, 403, 411]) assert.equal(close(code), 'stop', String(code));
  for (const code of [408, 428, 500, 503, 499, undefined]) assert.equal(close(code), 'retry', String(code));
  assert.equal(closeAction({ connection: 'close' }).kind, 'retry');
});

test("send errors: WhatsApp's rate limit waits, a refused message fails the chunk, a closed connection is retried", () => {
  const boom = (statusCode: number | undefined, message: string) => Object.assign(new Error(message), { output: { statusCode } });
  const limited = sendError(boom(429, 'rate-overlimit'));
  assert.equal(limited.kind, 'rate_limited');
  assert.ok((limited.retryAfterMs ?? 0) > 0);
  assert.equal(sendError(boom(undefined, 'rate-overlimit')).kind, 'rate_limited');
  assert.equal(sendError(boom(400, 'bad-request')).kind, 'permanent');
  assert.equal(sendError(boom(428, 'Connection Closed')).kind, 'transient');
  assert.equal(sendError(boom(408, 'timed out')).kind, 'transient');
  assert.equal(sendError(new Error('socket hang up')).kind, 'transient');
});

// ---------------------------------------------------------------- the auth store, the QR sign-in, the connection

let db: TestStore;
let codec: WaCodec;
/** The channels kit the connection runs on, as an adapter gets it: from the running channels module. */
let k: AgentTestKernel;
let kit: ChannelKit;
/** A vault that binds each value to its owner, as the real one does (a value under another owner does not open). */
const vault = {
  seal: (plain: string, owner: string) => `${owner}|${Buffer.from(plain).toString('base64')}`,
  open(sealed: string, owner: string) {
    const [by, data] = sealed.split('|');
    if (by !== owner || data === undefined) throw new Error('not sealed for this owner');
    return Buffer.from(data, 'base64').toString();
  },
};
const authStore = () => new AuthStore('whatsapp', { store: () => db.store, vault: () => vault, codec, log: silent });
const paired = (): WaCreds => ({ ...codec.freshCreds(), me: { id: BOT_JID, name: 'bot' } });
const rows = async () => (await db.store.many<{ key: string }>('SELECT key FROM channel_whatsapp_auth ORDER BY key')).map((r) => r.key);

before(async () => {
  db = openTestStore([path.resolve(import.meta.dirname, '..')]);
  codec = await loadCodec();
  k = await startAgentTestKernel({ only: MODULES.filter((m) => m !== 'channel-whatsapp') });
  kit = k.kernel.services.view<ChannelKit>(channelKit.id);
});
after(async () => {
  db?.close();
  await k?.stop();
});

test('the auth state round-trips through sealed rows, Buffers and app-state keys included', async () => {
  const auth = authStore();
  const creds = paired();
  await auth.replace(creds, new Map<string, unknown>([[AuthStore.keyName('pre-key', '1'), { public: Buffer.from([1, 2]), private: Buffer.from([3]) }]]));
  const loaded = await auth.load();
  assert.ok(loaded);
  assert.deepEqual(loaded.state.creds.me, creds.me);
  assert.ok(Buffer.isBuffer((loaded.state.creds.noiseKey as { public: Buffer }).public), 'Buffers come back as Buffers');
  assert.deepEqual((loaded.state.creds.noiseKey as { public: Buffer }).public, Buffer.from((creds.noiseKey as { public: Uint8Array }).public));
  assert.deepEqual(await loaded.state.keys.get('pre-key', ['1', '2']), { '1': { public: Buffer.from([1, 2]), private: Buffer.from([3]) } });
  await loaded.state.keys.set({ 'app-state-sync-key': { AAA: { keyData: Buffer.from('k'), timestamp: 5 } }, 'pre-key': { '1': null } });
  const appKey = (await loaded.state.keys.get('app-state-sync-key', ['AAA'])).AAA as { keyData: Uint8Array; constructor: { name: string } };
  assert.equal(appKey.constructor.name, 'AppStateSyncKeyData', 'revived as the protobuf Baileys reads');
  assert.deepEqual(Buffer.from(appKey.keyData), Buffer.from('k'));
  assert.deepEqual(await loaded.state.keys.get('pre-key', ['1']), {}, 'a null deletes');
  const stored = await db.store.one<{ value: string }>("SELECT value FROM channel_whatsapp_auth WHERE key = 'creds'");
  assert.ok(stored!.value.startsWith('channel-whatsapp:auth:creds|'), 'sealed for its own key');
});

test("a writer of an earlier sign-in writes nothing after a new one or a logout: an old device's creds never come back", async () => {
  const auth = authStore();
  await auth.replace(paired(), new Map());
  const old = (await auth.load())!;
  const fresh = { ...paired(), me: { id: '15550009999:1@s.whatsapp.net' } };
  await auth.replace(fresh, new Map());
  old.state.creds.me = { id: 'stale:1@s.whatsapp.net' };
  await old.saveCreds();
  await old.backup();
  await old.state.keys.set({ session: { x: Buffer.from('stale') } });
  const now = (await auth.load())!;
  assert.equal(now.state.creds.me?.id, '15550009999:1@s.whatsapp.net');
  assert.deepEqual(await now.state.keys.get('session', ['x']), {});
  await auth.clear();
  await now.saveCreds();
  assert.deepEqual(await rows(), [], 'cleared stays cleared');
  assert.equal(await auth.load(), undefined);
});

test('a main row that does not open (another owner, cut, not JSON) falls back to the backup, which heals it', async () => {
  const auth = authStore();
  const creds = paired();
  await auth.replace(creds, new Map());
  for (const broken of ['channel-whatsapp:auth:creds.backup|e30=', 'channel-whatsapp:auth:creds|bm90IGpzb24=', 'garbage']) {
    await db.store.run("UPDATE channel_whatsapp_auth SET value = ? WHERE key = 'creds'", [broken]);
    const loaded = await auth.load();
    assert.equal(loaded?.state.creds.me?.id, BOT_JID, broken);
    const healed = await db.store.one<{ value: string }>("SELECT value FROM channel_whatsapp_auth WHERE key = 'creds'");
    assert.notEqual(healed!.value, broken);
  }
});

/** An adapter context that records the reports. */
function adapterContext() {
  const reports: string[] = [];
  const controller = new AbortController();
  const ctx: AdapterContext = {
    channel: 'whatsapp',
    config: { mode: 'web' },
    secrets: {},
    emit: async () => ({ duplicate: false }),
    report: (state, error) => void reports.push(error ? `${state}: ${error}` : state),
    fetch: () => Promise.reject(new Error('no fetch here')),
    allowOrigins: [],
    log: silent,
    signal: controller.signal,
  };
  return { ctx, reports, controller };
}

/** A factory whose sockets never say anything. */
const mute: WaSocketFactory = {
  qrTtlMs: 60_000,
  create: async () => ({
    ev: { on: () => undefined, off: () => undefined },
    user: undefined,
    sendMessage: async () => undefined,
    sendPresenceUpdate: async () => undefined,
    downloadMedia: async () => Buffer.alloc(0),
    end: () => undefined,
    logout: async () => undefined,
  }),
};

test('a sign-in without a first code in time is an error (502) naming the wait', async () => {
  await assert.rejects(
    startQrSignIn({ factory: mute, freshCreds: codec.freshCreds, auth: authStore(), logger: baileysLogger(silent), firstCodeMs: 100 }),
    (err: Error & { statusCode?: number }) => err.statusCode === 502 && /no QR code within 0.1 s/.test(err.message),
  );
});

test('a sign-in whose socket keeps closing is made again a few times, then fails with the cause', async () => {
  const fake = new FakeWhatsApp();
  const session = await startQrSignIn({ factory: fake.factory, freshCreds: codec.freshCreds, auth: authStore(), logger: baileysLogger(silent) });
  for (let i = 1; i <= 3; i++) {
    fake.endCurrent(428);
    await waitFor(() => (fake.sockets.length === i + 1 && fake.sockets[i]!.qrShown ? true : undefined), 2_000, `socket ${i + 1}`);
    assert.equal(session.status().status, 'pending');
    assert.match(session.code, new RegExp(`fake-ref-${i + 1}-1`), 'the new socket shows its own code');
  }
  fake.endCurrent(428);
  await sleep(50);
  assert.equal(fake.sockets.length, 4, 'no fifth socket');
  assert.deepEqual(session.status(), { status: 'failed', error: 'the WhatsApp Web connection closed (428: closed with 428)' });
});

test('the running connection: 515 makes the socket again at once, but not for ever; then the backoff, then connected', async () => {
  const auth = authStore();
  await auth.replace(paired(), new Map());
  const fake = new FakeWhatsApp();
  const { ctx, reports, controller } = adapterContext();
  fake.failNext(515, 515, 515, 515);
  const connection = await startWeb(ctx, { factory: () => fake.factory, auth: async () => auth, kit, toOpus: () => undefined });
  try {
    await waitFor(() => (reports.includes('connected') ? true : undefined), 5_000, 'connected');
    assert.deepEqual(reports, ['connecting: whatsapp web: WhatsApp asked for a restart again and again', 'connected']);
    assert.equal(fake.sockets.length, 5, 'four at once, then one after the backoff');
  } finally {
    controller.abort();
    await connection.stop();
  }
  assert.ok(
    fake.sockets.every((s) => s.ended),
    'stop closed the socket',
  );
});

test('the production factory: Baileys itself, pointed at a refused loopback port, closes with 408 and is retried', async () => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  const auth = authStore();
  await auth.replace(paired(), new Map());
  const { ctx, reports, controller } = adapterContext();
  const factory = baileysFactoryFor({ waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat` });
  const connection = await startWeb(ctx, { factory: () => factory, auth: async () => auth, kit, toOpus: () => undefined });
  try {
    const report = await waitFor(() => reports.find((r) => r.startsWith('connecting: ')), 10_000, 'a close reported');
    assert.match(report, /closed \(408: WebSocket Error \(connect ECONNREFUSED/);
  } finally {
    controller.abort();
    await connection.stop();
  }
});
