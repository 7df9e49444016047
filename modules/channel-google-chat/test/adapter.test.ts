// The adapter without a kernel: a chunk sent again with its nonce (a re-send after a crash) is one message on Chat;
// a key the token endpoint refuses, or a token that is no JSON key, fails the start as an auth error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGoogleChatFake } from '@talon/testing';
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { googleChatAdapter } from '../services/adapter.ts';
import { configureOf } from './harness.ts';

// The channels kit is another module's: the adapter only reads retryAfterMs from it.
const kit = () => ({ retryAfterMs: () => undefined }) as unknown as ChannelKit;

function context(fields: Record<string, unknown>): AdapterContext {
  const { token, ...config } = fields;
  return {
    channel: 'google_chat',
    config,
    secrets: { token: token as string },
    emit: async () => ({ duplicate: false }),
    report: () => undefined,
    fetch: async (r) => {
      const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body as string | undefined });
      const body = Buffer.from(await res.arrayBuffer());
      return { status: res.status, statusText: res.statusText, headers: Object.fromEntries(res.headers), body, truncated: false, finalUrl: r.url };
    },
    allowOrigins: [],
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    signal: new AbortController().signal,
  };
}

test('a chunk sent again with the same nonce is one message on Chat (requestId), and names it', async () => {
  const chat = await startGoogleChatFake();
  try {
    const conn = await googleChatAdapter({}, kit).start(context(configureOf(chat)));
    const chunk = { chatId: 'spaces/dm1', text: 'once', plain: 'once', nonce: 'row-7' };
    const first = await conn.send(chunk);
    const again = await conn.send(chunk);
    assert.equal(chat.messages.length, 1);
    assert.equal(again.messageId, first.messageId);
    assert.equal(chat.calls.filter((c) => c.method === 'POST /token').length, 1, 'the access token is kept');
    await conn.stop();
  } finally {
    await chat.stop();
  }
});

test('a token that is not a service account key, or a key Google refuses, fails the start as auth', async () => {
  const chat = await startGoogleChatFake();
  try {
    const fields = configureOf(chat);
    for (const token of ['verification-token-abc', JSON.stringify({ client_email: 'x@y' })])
      await assert.rejects(
        googleChatAdapter({}, kit).start(context({ ...fields, token })),
        (err: Error & { kind?: string }) => err.kind === 'auth' && /token/.test(err.message),
      );
    const key = JSON.parse(chat.serviceAccountKey) as Record<string, string>;
    const other = await startGoogleChatFake();
    const stranger = { ...key, private_key: (JSON.parse(other.serviceAccountKey) as Record<string, string>).private_key };
    await other.stop();
    await assert.rejects(
      googleChatAdapter({}, kit).start(context({ ...fields, token: JSON.stringify(stranger) })),
      (err: Error & { kind?: string }) => err.kind === 'auth' && !err.message.includes('PRIVATE KEY'),
    );
  } finally {
    await chat.stop();
  }
});
