/**
 * The adapter on its own against the ntfy fake, with a context built here (the kit and net of a running kernel, an
 * emit the test controls, the cursor table on a test store): the cursor moves only past committed messages, so a
 * process killed mid-commit reads the message again; what was published while no process ran is read on the next
 * start; the bot's own replies are not messages for it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPostgresTestStore, openTestStore, startAgentTestKernel, startNtfyFake, waitFor, type AgentTestKernel, type NtfyFake } from '@talon/testing';
import { channelKit, type AdapterContext, type ChannelKit, type EmitResult, type InboundMessage } from '@talon/channels';
import type { NetFetch } from '@talon/net';
import type { Store } from '@talon/module-sdk';
import { ntfyAdapter } from '../services/adapter.ts';
import { storeCursor, type Cursor } from '../services/cursor.ts';

const MODULE = path.join(import.meta.dirname, '..');
const TOKEN = 'tk_adapter00000000000000000000';

describe('ntfy adapter on the ntfy fake', () => {
  let k: AgentTestKernel;
  let ntfy: NtfyFake;
  let db: { store: Store; close(): unknown };
  let cursor: Cursor;
  before(async () => {
    k = await startAgentTestKernel({
      only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-ntfy'],
    });
    ntfy = await startNtfyFake({ token: TOKEN, keepaliveMs: 1_000 });
    db = process.env.TALON_TEST_DB === 'postgres' ? await openPostgresTestStore([MODULE]) : openTestStore([MODULE]);
    cursor = storeCursor(() => db.store);
  });
  after(async () => {
    await ntfy?.stop();
    await db?.close();
    await k?.stop();
  });

  let channels = 0;
  /** Starts the adapter for `channel` (the cursor's key) with `emit` as the journal. */
  async function start(channel: string, emit: (m: InboundMessage) => Promise<EmitResult>, token = TOKEN) {
    const controller = new AbortController();
    const net = k.kernel.services.view<NetFetch>('net.fetch');
    const origin = new URL(ntfy.url).host;
    const reports: string[] = [];
    const ctx: AdapterContext = {
      channel,
      config: { server_url: ntfy.url, topic: 'alpha,beta' },
      secrets: { token },
      emit,
      report: (state, error) => void reports.push(`${state}${error ? `: ${error}` : ''}`),
      fetch: (r) => net.fetch({ ...r, allowOrigins: [origin] }),
      allowOrigins: [origin],
      log: { info() {}, warn() {}, error() {} },
      signal: controller.signal,
    };
    const subscribed = ntfy.subscribers();
    const adapter = ntfyAdapter(k.kernel.services.view<ChannelKit>(channelKit.id), (url, init, policy) => net.webFetch(url, init, policy), cursor, {
      livenessMs: 5_000,
      streamMs: 60_000,
    });
    const conn = await adapter.start(ctx);
    channels++;
    if (token === TOKEN) await waitFor(() => ntfy.subscribers() > subscribed && reports.includes('connected'), 10_000, 'the subscription');
    return {
      conn,
      reports,
      async stop() {
        controller.abort();
        await conn.stop();
        await waitFor(() => ntfy.subscribers() === subscribed, 5_000, 'the stream closed');
      },
    };
  }
  const lastSince = () => ntfy.calls.filter((c) => c.method === 'subscribe').at(-1)!.params.since;

  test('a message whose commit never finished is read again by the next process; a committed one is not', async () => {
    const channel = `kill-${channels}`;
    const seen: string[] = [];
    const first = await start(channel, async (m) => {
      seen.push(m.text);
      if (m.text === 'second') return new Promise<EmitResult>(() => undefined); // killed mid-commit
      return { duplicate: false };
    });
    const one = ntfy.publish('alpha', 'first');
    ntfy.publish('alpha', 'second');
    await waitFor(() => seen.length === 2, 10_000, 'both delivered');
    await first.stop();
    assert.equal(await cursor.get(channel), one.id, 'the cursor stays before the uncommitted message');
    const again: InboundMessage[] = [];
    const second = await start(channel, async (m) => {
      again.push(m);
      return { duplicate: false };
    });
    try {
      assert.equal(lastSince(), one.id);
      await waitFor(() => again.length === 1, 10_000, 'the redelivery');
      assert.equal(again[0]!.text, 'second');
      assert.equal(again[0]!.chatId, 'alpha');
      await waitFor(async () => (await cursor.get(channel)) === ntfy.messages('alpha').at(-1)!.id, 5_000, 'the cursor past it');
    } finally {
      await second.stop();
    }
  });

  test('messages published while no process ran are read on the next start, from the first subscription on', async () => {
    const channel = `offline-${channels}`;
    const first = await start(channel, async () => ({ duplicate: false }));
    await first.stop();
    assert.match((await cursor.get(channel)) ?? '', /^\d+$/, 'before any message the cursor is the open event’s time');
    ntfy.publish('beta', 'while you were away', { title: 'Note' });
    const seen: InboundMessage[] = [];
    const second = await start(channel, async (m) => {
      seen.push(m);
      return { duplicate: false };
    });
    try {
      // `since` counts in whole seconds: a message an earlier test published in the second the first start opened in
      // comes again too (the journal drops such repeats by their id). The one published offline is the one to find.
      const offline = () => seen.find((m) => m.chatId === 'beta');
      await waitFor(() => offline(), 10_000, 'the message published offline');
      assert.equal(offline()!.text, 'Note\n\nwhile you were away', 'the title first');
    } finally {
      await second.stop();
    }
  });

  test('a failed commit resubscribes from the cursor and the message comes again', async () => {
    const seen: string[] = [];
    let failures = 1;
    const run = await start(`fail-${channels}`, async (m) => {
      seen.push(m.text);
      if (m.text === 'retry me' && failures-- > 0) throw new Error('the journal is unavailable');
      return { duplicate: false };
    });
    try {
      ntfy.publish('alpha', 'retry me');
      // (A cursor that is still a time also brings older messages of that second: the journal drops those.)
      await waitFor(() => seen.filter((t) => t === 'retry me').length === 2, 15_000, 'the message twice');
    } finally {
      await run.stop();
    }
  });

  test('a reply is published to the topic with the bearer token and the reply tag, and is no message for the bot', async () => {
    const seen: string[] = [];
    const run = await start(`reply-${channels}`, async (m) => {
      seen.push(m.text);
      return { duplicate: false };
    });
    try {
      const sent = await run.conn.send({ chatId: 'beta', text: 'the answer', plain: 'the answer', nonce: 'row-1' });
      assert.equal(sent.messageId, ntfy.messages('beta').at(-1)!.id);
      assert.deepEqual(ntfy.calls.filter((c) => c.method === 'publish').at(-1)!.params.tags, ['talon-reply']);
      ntfy.publish('beta', 'a person again');
      await waitFor(() => seen.length === 1, 10_000, 'the next message');
      assert.deepEqual(seen, ['a person again'], 'the bot’s own reply was skipped');
      await assert.rejects(run.conn.send({ chatId: 'not/a topic', text: 'x', plain: 'x', nonce: 'row-2' }), /no ntfy topic/);
    } finally {
      await run.stop();
    }
  });

  test('a refused token stops the adapter with last_error that does not show it', async () => {
    const run = await start(`auth-${channels}`, async () => ({ duplicate: false }), 'tk_wrong-token-value');
    await waitFor(() => run.reports.some((r) => r.startsWith('error')), 10_000, 'the refusal');
    const error = run.reports.find((r) => r.startsWith('error'))!;
    assert.match(error, /refused the access token/);
    assert.ok(!error.includes('tk_wrong-token-value'));
    await run.conn.stop();
  });
});
