// The Discord fake's own protocol: the Gateway's HELLO/IDENTIFY/READY, heartbeats, sequence numbers, RESUME replaying
// what a dropped connection missed, INVALID_SESSION, close code 4004; REST nonce dedup and 429 headers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { waitFor } from '@talon/testing';
import { Intents, startDiscordFake } from './server.ts';

interface Frame {
  op: number;
  d: any;
  s: number | null;
  t: string | null;
}

async function connect(url: string) {
  const ws = new WebSocket(`${url}?v=10&encoding=json`);
  const frames: Frame[] = [];
  let closed: number | undefined;
  ws.on('message', (raw) => frames.push(JSON.parse(String(raw)) as Frame));
  ws.on('close', (code) => (closed = code));
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  return {
    ws,
    frames,
    send: (op: number, d: unknown) => ws.send(JSON.stringify({ op, d })),
    frame: (test: (f: Frame) => boolean, what: string) => waitFor(() => frames.find(test), 5_000, what),
    closed: () => waitFor(() => closed, 5_000, 'the close'),
  };
}
const intents = Intents.GUILD_MESSAGES | Intents.DIRECT_MESSAGES | Intents.MESSAGE_CONTENT;

test('gateway: HELLO, IDENTIFY → READY, heartbeat ACK, dispatches numbered; a bad token closes with 4004', async () => {
  const dc = await startDiscordFake();
  try {
    const info = (await (await fetch(`${dc.api}/v10/gateway/bot`, { headers: { authorization: `Bot ${dc.token}` } })).json()) as { url: string };
    assert.equal(info.url, dc.gatewayUrl);
    const bad = await connect(info.url);
    await bad.frame((f) => f.op === 10, 'HELLO');
    bad.send(2, { token: 'wrong', intents, properties: { os: 'linux', browser: 't', device: 't' } });
    assert.equal(await bad.closed(), 4004);

    const c = await connect(info.url);
    const hello = await c.frame((f) => f.op === 10, 'HELLO');
    assert.equal(hello.d.heartbeat_interval, 1_000);
    c.send(2, { token: dc.token, intents, properties: { os: 'linux', browser: 't', device: 't' } });
    const ready = await c.frame((f) => f.t === 'READY', 'READY');
    assert.equal(ready.s, 1);
    assert.equal(ready.d.user.id, dc.bot.id);
    assert.equal(ready.d.resume_gateway_url, dc.gatewayUrl);
    c.send(1, 1);
    await c.frame((f) => f.op === 11, 'HEARTBEAT_ACK');
    dc.injectMessage({ channel_id: '10', guild_id: '20', content: 'hello' });
    const created = await c.frame((f) => f.t === 'MESSAGE_CREATE', 'MESSAGE_CREATE');
    assert.deepEqual([created.s, created.d.content, created.d.guild_id], [2, 'hello', '20']);
    c.send(2, { token: dc.token, intents, properties: {} });
    assert.equal(await c.closed(), 4005, 'a second IDENTIFY on one connection');
  } finally {
    await dc.stop();
  }
});

test('gateway: RESUME after a drop replays the missed dispatches in order, then RESUMED; INVALID_SESSION after', async () => {
  const dc = await startDiscordFake();
  try {
    const c = await connect(dc.gatewayUrl);
    c.send(2, { token: dc.token, intents, properties: {} });
    const ready = await c.frame((f) => f.t === 'READY', 'READY');
    dc.injectMessage({ channel_id: '10', content: 'seen' });
    const seen = await c.frame((f) => f.t === 'MESSAGE_CREATE', 'the first message');
    dc.dropConnections();
    await c.closed();
    dc.injectMessage({ channel_id: '10', content: 'missed 1' });
    dc.injectMessage({ channel_id: '10', content: 'missed 2' });

    const r = await connect(ready.d.resume_gateway_url);
    await r.frame((f) => f.op === 10, 'HELLO');
    r.send(6, { token: dc.token, session_id: ready.d.session_id, seq: seen.s });
    await r.frame((f) => f.t === 'RESUMED', 'RESUMED');
    const replayed = r.frames.filter((f) => f.op === 0);
    assert.deepEqual(
      replayed.map((f) => [f.s, f.t, f.d?.content]),
      [
        [3, 'MESSAGE_CREATE', 'missed 1'],
        [4, 'MESSAGE_CREATE', 'missed 2'],
        [5, 'RESUMED', undefined],
      ],
    );
    assert.equal(dc.openSockets(), 1);

    dc.invalidateSessions(false);
    const invalid = await r.frame((f) => f.op === 9, 'INVALID_SESSION');
    assert.equal(invalid.d, false);
    const again = await connect(dc.gatewayUrl);
    again.send(6, { token: dc.token, session_id: ready.d.session_id, seq: 5 });
    assert.equal((await again.frame((f) => f.op === 9, 'INVALID_SESSION for a forgotten session')).d, false);
  } finally {
    await dc.stop();
  }
});

test('gateway: without MESSAGE_CONTENT a guild message reaches the bot empty unless it mentions it', async () => {
  const dc = await startDiscordFake();
  try {
    const c = await connect(dc.gatewayUrl);
    c.send(2, { token: dc.token, intents: Intents.GUILD_MESSAGES | Intents.DIRECT_MESSAGES, properties: {} });
    await c.frame((f) => f.t === 'READY', 'READY');
    dc.injectMessage({ channel_id: '10', guild_id: '20', content: 'chatter' });
    dc.injectMessage({ channel_id: '10', guild_id: '20', content: `<@${dc.bot.id}> hi`, mentions: [dc.bot] });
    await waitFor(() => c.frames.filter((f) => f.t === 'MESSAGE_CREATE').length === 2, 5_000, 'two messages');
    assert.deepEqual(
      c.frames.filter((f) => f.t === 'MESSAGE_CREATE').map((f) => f.d.content),
      ['', `<@${dc.bot.id}> hi`],
    );
  } finally {
    await dc.stop();
  }
});

test('REST: bad token 401, enforce_nonce returns the first message, 429 with rate-limit headers, limits checked', async () => {
  const dc = await startDiscordFake();
  const post = (body: unknown, token = dc.token) =>
    fetch(`${dc.api}/v10/channels/10/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  try {
    assert.equal((await post({ content: 'x' }, 'wrong')).status, 401);
    const me = (await (await fetch(`${dc.api}/v10/users/@me`, { headers: { authorization: `Bot ${dc.token}` } })).json()) as { id: string };
    assert.equal(me.id, dc.bot.id);
    const first = (await (await post({ content: 'once', nonce: 'n-1', enforce_nonce: true })).json()) as { id: string };
    const second = (await (await post({ content: 'once', nonce: 'n-1', enforce_nonce: true })).json()) as { id: string };
    assert.equal(second.id, first.id);
    assert.equal(dc.sent.length, 1, 'one message created for one nonce');
    assert.equal((await post({ content: 'x'.repeat(2001) })).status, 400);
    assert.equal(((await (await post({ content: '' })).json()) as { code: number }).code, 50006);

    dc.rateLimitNext('POST /channels/10/messages', 0.25);
    const limited = await post({ content: 'x' });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '1');
    assert.equal(limited.headers.get('x-ratelimit-reset-after'), '0.25');
    assert.equal(((await limited.json()) as { retry_after: number }).retry_after, 0.25);
    assert.equal((await post({ content: 'x' })).status, 200);
    assert.ok(dc.calls.some((c) => c.method === 'POST /channels/10/messages' && c.params.nonce === 'n-1'));
  } finally {
    await dc.stop();
  }
});

test('REST: a multipart send (payload_json + files[n]) records the upload, served at its attachment URL; user files are served too', async () => {
  const dc = await startDiscordFake();
  const auth = { authorization: `Bot ${dc.token}` };
  try {
    const form = new FormData();
    form.append('files[0]', new Blob([Buffer.from('chart bytes')], { type: 'image/png' }), 'chart.png');
    form.append('payload_json', JSON.stringify({ content: '', nonce: 'u-1', enforce_nonce: true }));
    const res = await fetch(`${dc.api}/v10/channels/10/messages`, { method: 'POST', headers: auth, body: form });
    assert.equal(res.status, 200);
    const message = (await res.json()) as { id: string; attachments: Array<{ filename: string; url: string; size: number; content_type: string }> };
    assert.deepEqual(
      message.attachments.map((a) => [a.filename, a.size, a.content_type]),
      [['chart.png', 11, 'image/png']],
    );
    assert.deepEqual(
      dc.uploads.map((u) => [u.channel_id, u.message_id, u.file.name, u.file.content.toString()]),
      [['10', message.id, 'chart.png', 'chart bytes']],
    );
    // Discord's CDN serves attachments without the bot token.
    assert.equal(await (await fetch(message.attachments[0]!.url)).text(), 'chart bytes');

    const bad = new FormData();
    bad.append('payload_json', '{not json');
    const refused = await fetch(`${dc.api}/v10/channels/10/messages`, { method: 'POST', headers: auth, body: bad });
    assert.equal(((await refused.json()) as { code: number }).code, 50109);

    const injected = dc.injectMessage({
      channel_id: '11',
      content: 'see',
      files: [{ name: 'notes.txt', type: 'text/plain', content: Buffer.from('the notes') }],
    });
    const [attachment] = injected.attachments as Array<{ url: string; filename: string }>;
    assert.equal(attachment!.filename, 'notes.txt');
    assert.equal(await (await fetch(attachment!.url)).text(), 'the notes');
    assert.equal((await fetch(attachment!.url.replace('notes.txt', 'other.txt'))).status, 404);
  } finally {
    await dc.stop();
  }
});
