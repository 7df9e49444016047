/**
 * Ack after commit through the real journal: the database refuses writes (as a full disk would) while the message
 * arrives, so the journal's commit fails; the envelope stays unacked, the fake sends it again, and the message lands
 * in its session exactly once with one reply. Acking before the commit would lose it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { refuseWrites, startAgentTestKernel, startSlackFake, waitFor, type AgentTestKernel, type SlackFake } from '@talon/testing';
import { MODULES } from './helpers.ts';

const CHAT = 'D0COMMIT';
let k: AgentTestKernel;
let slack: SlackFake;

before(async () => {
  slack = await startSlackFake({ ackTimeoutMs: 1_000 });
  // Warnings kept: the adapter's "not committed" line is the signal that the failed commit happened.
  k = await startAgentTestKernel({ only: MODULES, config: 'log_level = "warn"' });
  await k.spawnAgent('helper');
  const res = await k.request('/api/channels/slack/configure', {
    method: 'POST',
    json: { token: slack.botToken, app_token: slack.appToken, api_url: slack.apiUrl, dm_policy: 'open' },
  });
  assert.equal(res.status, 200, await res.text());
  await waitFor(async () => ((await (await k.request('/api/channels/slack')).json()) as { connected: boolean }).connected, 15_000, 'slack connected');
});
after(async () => {
  await k?.stop();
  await slack?.stop();
});

test('a message whose journal commit failed is not acked; Slack sends it again and it is in the session once', async () => {
  k.fake.enqueue({ text: 'answered once' });
  const undo = await refuseWrites(k.kernel.store, 'channels_inbound');
  const envelope = slack.injectMessage({ channel: CHAT, channel_type: 'im', text: 'keep me' });
  try {
    await waitFor(() => k.logLines().some((l) => l.includes('not committed')), 10_000, 'the failed commit');
  } finally {
    await undo();
  }
  const acks = () => slack.calls.filter((c) => c.method === 'socket ack' && c.params.envelope_id === envelope.envelope_id);
  assert.equal(acks().length, 0, 'not acked after the failed commit');

  await waitFor(() => slack.sent.filter((m) => m.channel === CHAT).length === 1, 15_000, 'the reply to the redelivered envelope');
  await waitFor(() => acks().length >= 1, 5_000, 'the redelivery acked');
  assert.equal(slack.unacked().length, 0, 'nothing left unacked');
  await new Promise((r) => setTimeout(r, 500));
  const found = (await (await k.request(`/api/sessions/search?q=${encodeURIComponent(`slack:${CHAT}`)}`)).json()) as { items: Array<{ session_id: string }> };
  assert.equal(found.items.length, 1, 'one session for the chat');
  const session = (await (await k.request(`/api/sessions/${found.items[0]!.session_id}`)).json()) as { messages: Array<{ role: string; content: unknown }> };
  const mine = session.messages.filter((m) => m.role === 'User' && JSON.stringify(m.content).includes('keep me'));
  assert.equal(mine.length, 1, 'the message is in its session exactly once');
  assert.deepEqual(
    slack.sent.filter((m) => m.channel === CHAT).map((m) => m.text),
    ['answered once'],
  );
});
