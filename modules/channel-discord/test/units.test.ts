/** The adapter's connection without a kernel: nonce deduplication against the fake, and the held RESUME sequence. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDiscordFake, waitFor } from '@talon/testing';
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
