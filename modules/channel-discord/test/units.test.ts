/**
 * The adapter's connection without a kernel: nonce deduplication against the fake, the held RESUME sequence, uploads out
 * and attachments in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDiscordFake, waitFor } from '@talon/testing';
import type { InboundMessage } from '@talon/channels';
import { attachmentAllowed, MAX_MEDIA_BYTES } from '../services/attachments.ts';
import { startDiscord } from '../services/connection.ts';
import { GatewaySession } from '../services/session.ts';
import { context } from './context.ts';

test('a chunk sent again with its row nonce (after a crash) returns the message it created, not a second one', async () => {
  const fake = await startDiscordFake();
  const controller = new AbortController();
  const connection = await startDiscord(context(fake.api, fake.token, controller));
  try {
    const chunk = { chatId: '100', text: 'once', plain: 'once', nonce: '7f0c1a9e-5d2b-4c1e-9a55-0d3c2b1a0f99' };
    const first = await connection.send(chunk);
    const again = await connection.send(chunk);
    assert.equal(again.messageId, first.messageId);
    assert.equal(fake.sent.length, 1);
    await connection.send({ ...chunk, nonce: 'another-row' });
    assert.equal(fake.sent.length, 2);
  } finally {
    controller.abort();
    await connection.stop();
    await waitFor(() => fake.openSockets() === 0, 5_000, 'socket closed');
    await fake.stop();
  }
});

test('the RESUME sequence stays below a message not committed yet, and never moves back on a replay', () => {
  const session = new GatewaySession((url) => url);
  session.update(0, { sessionId: 's1', sequence: 1, resumeURL: 'wss://gateway.discord.gg', shardId: 0, shardCount: 1 });
  session.update(0, { sessionId: 's1', sequence: 5, resumeURL: 'wss://gateway.discord.gg', shardId: 0, shardCount: 1 });
  session.hold(4);
  session.hold(5);
  assert.equal(session.retrieve()?.sequence, 3);
  session.release(4);
  assert.equal(session.retrieve()?.sequence, 4);
  session.release(5);
  assert.equal(session.retrieve()?.sequence, 5);
  session.update(0, { sessionId: 's1', sequence: 2, resumeURL: 'wss://gateway.discord.gg', shardId: 0, shardCount: 1 });
  assert.equal(session.retrieve()?.sequence, 5);
});

test('a chunk with a file is one multipart upload (files[0] + payload_json with the nonce), its text alongside', async () => {
  const fake = await startDiscordFake();
  const controller = new AbortController();
  const connection = await startDiscord(context(fake.api, fake.token, controller));
  try {
    const png = Buffer.from('not really a png');
    const media = { mediaType: 'image/png', name: 'chart.png', data: png.toString('base64') };
    const { messageId } = await connection.send({ chatId: '100', text: 'the chart', plain: 'the chart', media, nonce: 'row-1' });
    assert.deepEqual(
      fake.uploads.map((u) => [u.channel_id, u.message_id, u.file.name, u.file.type, u.file.content]),
      [['100', messageId, 'chart.png', 'image/png', png]],
    );
    assert.equal(fake.sent[0]!.content, 'the chart');
    const call = fake.calls.find((c) => c.method === 'POST /channels/100/messages')!;
    assert.equal(JSON.parse(String(call.params.payload_json)).enforce_nonce, true);
    // The same row again (after a crash): Discord's nonce returns the first message, the file is not posted twice.
    assert.equal((await connection.send({ chatId: '100', text: 'the chart', plain: 'the chart', media, nonce: 'row-1' })).messageId, messageId);
    assert.equal(fake.sent.length, 1);
  } finally {
    controller.abort();
    await connection.stop();
    await fake.stop();
  }
});

test("attachments in are downloaded (an image as its content); one over 10 MB or off Discord's hosts stays a link", async () => {
  const fake = await startDiscordFake();
  const controller = new AbortController();
  const got: InboundMessage[] = [];
  const ctx = { ...context(fake.api, fake.token, controller), emit: async (m: InboundMessage) => (got.push(m), { duplicate: false }) };
  const connection = await startDiscord(ctx);
  const author = { id: '900000000000000001', username: 'alice', discriminator: '0', global_name: 'Alice' };
  try {
    await waitFor(() => fake.openSockets() === 1 && fake.calls.some((c) => c.method === 'gateway op 2'), 5_000, 'identified');
    const pixel = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
    fake.injectMessage({ channel_id: '100', content: 'look', author, files: [{ name: 'pixel.png', type: 'image/png', content: pixel }] });
    const big = { id: '5', filename: 'huge.bin', size: MAX_MEDIA_BYTES + 1, content_type: 'application/zip', url: `${fake.api}/../attachments/100/5/huge.bin` };
    fake.injectMessage({ channel_id: '100', content: 'too big', author, attachments: [big] });
    const [first, second] = await waitFor(() => (got.length >= 2 ? got : undefined), 10_000, 'two messages');
    assert.deepEqual(first!.media, [{ mediaType: 'image/png', name: 'pixel.png', data: pixel.toString('base64') }]);
    assert.deepEqual(second!.media, [{ mediaType: 'application/zip', name: 'huge.bin', url: big.url }]);
    assert.ok(!fake.calls.some((c) => c.method.includes('huge.bin')), 'a file over the cap is not fetched');
  } finally {
    controller.abort();
    await connection.stop();
    await fake.stop();
  }
  assert.ok(attachmentAllowed('https://cdn.discordapp.com/attachments/1/2/a.png?ex=1', 'https://discord.com/api'));
  assert.ok(!attachmentAllowed('https://evil.example/attachments/1/2/a.png', 'https://discord.com/api'));
  assert.ok(!attachmentAllowed('http://cdn.discordapp.com/attachments/1/2/a.png', 'https://discord.com/api'));
  assert.ok(attachmentAllowed('http://127.0.0.1:9/attachments/1/2/a.png', 'http://127.0.0.1:9/api'));
});
