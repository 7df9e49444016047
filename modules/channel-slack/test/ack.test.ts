/**
 * Ack after commit, at the adapter's seam: the adapter started with a context whose emit (the journal commit) fails
 * once. The envelope must stay unacked so Slack sends it again, and be acked only after the commit that succeeded.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { channelKit, type AdapterContext, type ChannelConnection, type ChannelKit, type InboundMessage } from '@talon/channels';
import { startSlackFake, startTestKernel, waitFor, type SlackFake, type TestKernel } from '@talon/testing';
import { slackAdapter } from '../services/adapter.ts';

let k: TestKernel;
let slack: SlackFake;
let connection: ChannelConnection | undefined;
const controller = new AbortController();
const emitted: Array<{ message: InboundMessage; ok: boolean; at: number }> = [];
const states: string[] = [];

before(async () => {
  slack = await startSlackFake({ ackTimeoutMs: 300 });
  // The kit is the channels module's service; the adapter itself runs on a context made here.
  k = await startTestKernel({ only: ['agents', 'auth', 'secrets', 'net', 'tasks', 'channels'] });
  const kit = k.kernel.services.view<ChannelKit>(channelKit.id);
  const ctx: AdapterContext = {
    channel: 'slack',
    config: { api_url: slack.apiUrl },
    secrets: { token: slack.botToken, app_token: slack.appToken },
    async emit(message) {
      const ok = emitted.length > 0; // the first commit fails
      emitted.push({ message, ok, at: Date.now() });
      if (!ok) throw new Error('database is locked');
      return { duplicate: emitted.filter((e) => e.ok).length > 1 };
    },
    report: (state, error) => states.push(error ? `${state}: ${error}` : state),
    async fetch(request) {
      const res = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body as BodyInit | undefined,
        signal: request.signal,
      });
      return {
        status: res.status,
        statusText: res.statusText,
        headers: Object.fromEntries(res.headers),
        body: Buffer.from(await res.arrayBuffer()),
        truncated: false,
        finalUrl: res.url,
      };
    },
    allowOrigins: [],
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    signal: controller.signal,
  };
  connection = await slackAdapter(kit, {}).start(ctx);
});
after(async () => {
  controller.abort();
  await connection?.stop();
  await k?.stop();
  await slack?.stop();
});

test('an envelope whose commit failed is not acked; Slack sends it again and it is acked after the commit', async () => {
  assert.ok(states.includes('connected'));
  const envelope = slack.injectMessage({ channel: 'D0ACK', text: 'commit me', channel_type: 'im' });
  const acks = () => slack.calls.filter((c) => c.method === 'socket ack' && c.params.envelope_id === envelope.envelope_id);
  await waitFor(async () => acks().length === 1, 10_000, 'the envelope acked');
  assert.equal(emitted.length, 2, 'delivered twice: the first commit failed');
  assert.deepEqual(
    emitted.map((e) => e.ok),
    [false, true],
  );
  assert.equal(emitted[1]!.message.platformId, emitted[0]!.message.platformId, 'the redelivery has the same platform id');
  assert.ok(acks()[0]!.at >= emitted[1]!.at, 'acked after the commit that succeeded');
  assert.equal(slack.unacked().length, 0);
});
