// The Slack fake's own protocol: tokens per method, chat.postMessage, 429 ratelimited with Retry-After, Socket Mode's
// one-use URL, hello, envelopes redelivered with retry_attempt until acked by envelope_id, disconnect frames.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { waitFor } from '@talon/testing';
import { startSlackFake } from './server.ts';

const api = async (root: string, method: string, token: string, body: Record<string, unknown> = {}) => {
  const res = await fetch(`${root}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, any> };
};

async function socket(url: string) {
  const ws = new WebSocket(url);
  const frames: Array<Record<string, any>> = [];
  ws.on('message', (raw) => frames.push(JSON.parse(String(raw)) as Record<string, any>));
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  return { ws, frames, frame: (t: (f: Record<string, any>) => boolean, what: string) => waitFor(() => frames.find(t), 5_000, what) };
}

test('Web API: auth.test, token kinds, chat.postMessage in a thread, ratelimited 429', async () => {
  const sl = await startSlackFake();
  try {
    assert.equal((await api(sl.apiUrl, 'auth.test', sl.botToken)).body.user_id, sl.botUserId);
    assert.equal((await api(sl.apiUrl, 'auth.test', 'xoxb-wrong')).body.error, 'invalid_auth');
    assert.equal((await api(sl.apiUrl, 'apps.connections.open', sl.botToken)).body.error, 'not_allowed_token_type');
    const posted = await api(sl.apiUrl, 'chat.postMessage', sl.botToken, { channel: 'C1', text: 'hi', thread_ts: '1.000001' });
    assert.equal(posted.body.ok, true);
    assert.equal(posted.body.message.thread_ts, '1.000001');
    assert.equal((await api(sl.apiUrl, 'chat.postMessage', sl.botToken, { channel: 'C1' })).body.error, 'no_text');
    sl.rateLimitNext('chat.postMessage', 2);
    const limited = await api(sl.apiUrl, 'chat.postMessage', sl.botToken, { channel: 'C1', text: 'x' });
    assert.deepEqual([limited.status, limited.retryAfter, limited.body.error], [429, '2', 'ratelimited']);
    assert.deepEqual(
      sl.calls.map((c) => c.method),
      ['auth.test', 'auth.test', 'apps.connections.open', 'chat.postMessage', 'chat.postMessage', 'chat.postMessage'],
    );
  } finally {
    await sl.stop();
  }
});

test('Socket Mode: hello, an unacked envelope comes again with retry_attempt, an acked one does not; URL used once', async () => {
  const sl = await startSlackFake({ ackTimeoutMs: 200 });
  try {
    const { body } = await api(sl.apiUrl, 'apps.connections.open', sl.appToken);
    const c = await socket(body.url);
    assert.equal((await c.frame((f) => f.type === 'hello', 'hello')).num_connections, 1);
    await assert.rejects(socket(body.url), 'the ticket is good for one connection');

    const env = sl.injectMessage({ channel: 'C1', text: 'not acked' });
    await c.frame((f) => f.envelope_id === env.envelope_id && f.retry_attempt === 1, 'the redelivery');
    const again = c.frames.filter((f) => f.envelope_id === env.envelope_id);
    assert.deepEqual(again.map((f) => [f.retry_attempt, f.retry_reason]).slice(0, 2), [
      [0, ''],
      [1, 'timeout'],
    ]);
    assert.equal(again[0]!.payload.event.text, 'not acked');
    c.ws.send(JSON.stringify({ envelope_id: env.envelope_id }));
    await waitFor(() => sl.unacked().length === 0, 5_000, 'the ack to count');

    const acked = sl.injectMessage({ channel: 'D1', text: 'acked' });
    const first = await c.frame((f) => f.envelope_id === acked.envelope_id, 'the second envelope');
    assert.equal(first.payload.event.channel_type, 'im');
    c.ws.send(JSON.stringify({ envelope_id: acked.envelope_id }));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(c.frames.filter((f) => f.envelope_id === acked.envelope_id).length, 1, 'an acked envelope is not sent again');
  } finally {
    await sl.stop();
  }
});

test('Socket Mode: a disconnect frame (refresh_requested) precedes the close', async () => {
  const sl = await startSlackFake();
  try {
    const c = await socket((await api(sl.apiUrl, 'apps.connections.open', sl.appToken)).body.url);
    await c.frame((f) => f.type === 'hello', 'hello');
    const closed = new Promise((r) => c.ws.once('close', r));
    sl.disconnectAll('refresh_requested', 100);
    assert.equal((await c.frame((f) => f.type === 'disconnect', 'disconnect')).reason, 'refresh_requested');
    await closed;
    assert.equal(sl.openSockets(), 0);
  } finally {
    await sl.stop();
  }
});

test('events: an app_mention has no channel_type; one mention as both events shares its ts; a shared file is served to the bot token', async () => {
  const sl = await startSlackFake();
  try {
    const mention = sl.injectMessage({ channel: 'C1', text: `<@${sl.botUserId}> hi`, type: 'app_mention' });
    const event = mention.payload.event as Record<string, unknown>;
    assert.equal(event.channel_type, undefined);
    const message = sl.injectMessage({ channel: 'C1', text: `<@${sl.botUserId}> hi`, ts: String(event.ts) });
    assert.equal((message.payload.event as Record<string, unknown>).ts, event.ts);
    assert.notEqual(message.payload.event_id, mention.payload.event_id);

    const shared = sl.injectMessage({ channel: 'D1', text: 'see', files: [{ name: 'a.txt', mimetype: 'text/plain', data: Buffer.from('bytes') }] });
    const withFile = shared.payload.event as { subtype: string; files: Array<{ name: string; mimetype: string; size: number; url_private: string }> };
    assert.equal(withFile.subtype, 'file_share');
    const [file] = withFile.files;
    assert.deepEqual([file!.name, file!.mimetype, file!.size], ['a.txt', 'text/plain', 5]);
    const got = await fetch(file!.url_private, { headers: { authorization: `Bearer ${sl.botToken}` } });
    assert.equal(await got.text(), 'bytes');
    assert.equal((await fetch(file!.url_private, { redirect: 'manual' })).status, 302, 'not without the token');
  } finally {
    await sl.stop();
  }
});

test('files: the upload flow shares the bytes into the thread; completing a file never uploaded is refused', async () => {
  const sl = await startSlackFake();
  try {
    const got = await api(sl.apiUrl, 'files.getUploadURLExternal', sl.botToken, { filename: 'a.txt', length: 5 });
    assert.equal(got.body.ok, true);
    assert.match(String(got.body.upload_url), /^http:\/\/127\.0\.0\.1:\d+\/upload\/v1\/F/);
    const early = await api(sl.apiUrl, 'files.completeUploadExternal', sl.botToken, { files: [{ id: got.body.file_id }], channel_id: 'C1' });
    assert.equal(early.body.error, 'upload_not_found', 'no bytes yet');
    const form = new FormData();
    form.append('body', new Blob([Buffer.from('hello')]), 'Untitled');
    const up = await fetch(String(got.body.upload_url), { method: 'POST', body: form });
    assert.equal(up.status, 200);
    const done = await api(sl.apiUrl, 'files.completeUploadExternal', sl.botToken, {
      files: [{ id: got.body.file_id, title: 'a.txt' }],
      channel_id: 'C1',
      thread_ts: '1.000001',
    });
    assert.equal(done.body.files[0].id, got.body.file_id);
    assert.deepEqual(
      sl.uploads.map((u) => [u.channel, u.thread_ts, u.name, u.mimetype, u.data.toString()]),
      [['C1', '1.000001', 'a.txt', 'text/plain', 'hello']],
    );
    // The shared file is served to the bot token at its url_private, as Slack serves it.
    const file = await fetch(String(done.body.files[0].url_private), { headers: { authorization: `Bearer ${sl.botToken}` } });
    assert.equal(await file.text(), 'hello');
  } finally {
    await sl.stop();
  }
});

test('HTTP mode: events POSTed signed (v0 HMAC-SHA256), sent again with X-Slack-Retry-Num until a 2xx', async () => {
  const sl = await startSlackFake({ ackTimeoutMs: 200, signingSecret: 'shh' });
  const seen: Array<{ headers: Headers; body: string }> = [];
  const { createServer } = await import('node:http');
  const { createHmac } = await import('node:crypto');
  let answers = [500, 200];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        seen.push({ headers: new Headers(req.headers as Record<string, string>), body: Buffer.concat(chunks).toString() });
        res.writeHead(answers.shift() ?? 200).end();
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    sl.deliverTo(`http://127.0.0.1:${(server.address() as { port: number }).port}/events`);
    sl.injectMessage({ channel: 'D1', text: 'hi' });
    await waitFor(() => seen.length === 2 && sl.unacked().length === 0, 5_000, 'the retry acknowledged');
    const [first, second] = seen;
    assert.equal(first!.headers.get('x-slack-retry-num'), null);
    assert.equal(second!.headers.get('x-slack-retry-num'), '1');
    assert.equal(second!.body, first!.body);
    const ts = first!.headers.get('x-slack-request-timestamp')!;
    assert.equal(first!.headers.get('x-slack-signature'), `v0=${createHmac('sha256', 'shh').update(`v0:${ts}:${first!.body}`).digest('hex')}`);
    assert.equal(JSON.parse(first!.body).type, 'event_callback');
    answers = [200];
    const verified = await sl.verifyUrl('c1');
    assert.equal(verified.status, 200);
    assert.equal(JSON.parse(seen.at(-1)!.body).type, 'url_verification');
  } finally {
    server.close();
    await sl.stop();
  }
});
