// The adapter's own rules without a kernel: a push carries X-Line-Retry-Key derived from the chunk's nonce, so a
// re-send after a crash is sent once by LINE; the loading animation only in one-on-one chats; a refused token stops
// the start as an auth error; events the agent does not hear are dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLineFake } from '@talon/testing';
import type { AdapterContext, ChannelKit, InboundMessage } from '@talon/channels';
import { lineAdapter, retryKey } from '../services/adapter.ts';
import { toInbound } from '../services/inbound.ts';
import type { LineApi } from '../services/api.ts';

// The channels kit is another module's: the adapter only reads retryAfterMs from it.
const kit = () => ({ retryAfterMs: () => undefined }) as unknown as ChannelKit;

function context(secrets: Record<string, string>, config: Record<string, unknown>): AdapterContext {
  return {
    channel: 'line',
    config,
    secrets,
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

test('retry keys are UUIDs, stable per nonce and different between nonces', () => {
  const key = retryKey('row-1');
  assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(retryKey('row-1'), key);
  assert.notEqual(retryKey('row-2'), key);
});

test('a chunk pushed again with its nonce (a re-send after a crash) is sent once by LINE, and the send succeeds', async () => {
  const line = await startLineFake();
  try {
    const conn = await lineAdapter({}, kit).start(
      context({ token: line.token, channel_secret: line.channelSecret }, { api_url: line.apiRoot, data_url: line.apiRoot }),
    );
    const chunk = { chatId: 'U1', text: 'once', plain: 'once', nonce: 'row-42' };
    const first = await conn.send(chunk);
    const again = await conn.send(chunk);
    assert.equal(line.pushes.length, 1, 'LINE sent it once');
    assert.equal(line.pushes[0]!.retryKey, retryKey('row-42'));
    assert.equal(again.messageId, first.messageId, 'the re-send names the message sent the first time');
    await conn.typing!({ chatId: 'U1' });
    await conn.typing!({ chatId: 'C1' });
    assert.equal(line.loadings('U1'), 1);
    assert.equal(line.calls.filter((c) => c.method === 'POST /v2/bot/chat/loading/start').length, 1, 'no loading call for a group');
    await conn.stop();
  } finally {
    await line.stop();
  }
});

test('a refused channel access token fails the start as an auth error, without the token in the message', async () => {
  const line = await startLineFake();
  try {
    await assert.rejects(
      lineAdapter({}, kit).start(context({ token: 'wrong-token-123456', channel_secret: line.channelSecret }, { api_url: line.apiRoot })),
      (err: Error & { kind?: string }) => err.kind === 'auth' && !err.message.includes('wrong-token-123456'),
    );
  } finally {
    await line.stop();
  }
});

test('events: standby mode, follow events and stickers are not heard; a group mention is isSelf only', async () => {
  const api: LineApi = { call: () => Promise.reject(new Error('no call expected')) };
  const base = { type: 'message', mode: 'active', timestamp: 0, source: { type: 'group', groupId: 'C1', userId: 'U2' } };
  assert.equal(await toInbound({ ...base, mode: 'standby', message: { id: '1', type: 'text', text: 'x' } }, api, ''), undefined);
  assert.equal(await toInbound({ ...base, type: 'follow' }, api, ''), undefined);
  assert.equal(await toInbound({ ...base, message: { id: '2', type: 'sticker' } }, api, ''), undefined);
  const other = (await toInbound(
    { ...base, message: { id: '3', type: 'text', text: '@Ann hi', mention: { mentionees: [{ isSelf: false }] } } },
    api,
    '',
  )) as InboundMessage;
  assert.deepEqual([other.chatId, other.senderId, other.isGroup, other.mentioned], ['C1', 'U2', true, false]);
  const self = (await toInbound(
    { ...base, message: { id: '4', type: 'text', text: '@bot hi', mention: { mentionees: [{ isSelf: true }] } } },
    api,
    '',
  )) as InboundMessage;
  assert.equal(self.mentioned, true);
});

test('a signed event with a mentionees that is no list or a timestamp past the last date is read, not a TypeError (it was 500)', async () => {
  const api: LineApi = { call: () => Promise.reject(new Error('no call expected')) };
  const base = { type: 'message', mode: 'active', source: { type: 'group', groupId: 'C1', userId: 'U2' } };
  const odd = (await toInbound(
    { ...base, timestamp: 1e300, message: { id: '9', type: 'text', text: 'hi', mention: { mentionees: 'me' as unknown as [] } } },
    api,
    '',
  )) as InboundMessage;
  assert.deepEqual([odd.text, odd.mentioned, odd.sentAt], ['hi', false, undefined]);
});
