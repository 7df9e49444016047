// The webhook route through a real kernel: a missing or wrong X-Line-Signature is 401 and reaches nothing; the 200
// comes only after the journal commit (a failed commit is a 500, and LINE's redelivery lands once); LINE's console
// "Verify" (no events) is answered; a room is a group chat.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { refuseWrites, startAgentTestKernel, startLineFake, waitFor, type AgentTestKernel, type LineFake } from '@talon/testing';
import { WEBHOOK_ROUTE } from '../config.ts';
import { lineSignature } from '../services/signature.ts';
import { configureOf, dmId, MODULES, textsTo, user } from './harness.ts';

let k: AgentTestKernel;
let line: LineFake;
before(async () => {
  line = await startLineFake({ redeliveryMs: 100 });
  k = await startAgentTestKernel({ only: MODULES });
  await k.spawnAgent('helper');
  const res = await k.request('/api/channels/line/configure', { method: 'POST', json: { ...configureOf(line), dm_policy: 'open', group_policy: 'mention' } });
  assert.equal(res.status, 200, await res.text());
  await waitFor(async () => ((await (await k.request('/api/channels/line')).json()) as { state: string }).state === 'connected', 10_000, 'connected');
  line.deliverTo(k.url + WEBHOOK_ROUTE);
});
after(async () => {
  await k?.stop();
  await line?.stop();
});

const event = (id: string, userId: string, text: string) => ({
  type: 'message',
  mode: 'active',
  timestamp: Date.now(),
  source: { type: 'user', userId },
  webhookEventId: `ev-${id}`,
  deliveryContext: { isRedelivery: false },
  message: { id, type: 'text', text },
});

test('a body without the signature, with a wrong one or signed with another secret is 401 and nothing is journaled', async () => {
  const asked = k.fake.requests.length;
  const body = JSON.stringify({ destination: line.botUserId, events: [event('9001', dmId(901), 'let me in')] });
  for (const signature of ['', 'not-base64!', lineSignature('another-secret', body), lineSignature(line.channelSecret, body + ' ')]) {
    const res = await line.postRaw(body, signature);
    assert.equal(res.status, 401, signature);
    assert.match(((await res.json()) as { error: string }).error, /x-line-signature/);
  }
  await sleep(300);
  assert.equal(k.fake.requests.length, asked, 'no turn');
  // The same body with LINE's own signature is taken, and a body that is not LINE's shape is a 400 naming it.
  k.fake.enqueue({ text: 'welcome' });
  assert.equal((await line.postRaw(body)).status, 200);
  await waitFor(() => textsTo(line, dmId(901)).length === 1 || undefined, 10_000, 'the reply');
  const bad = await line.postRaw(JSON.stringify({ destination: 'x' }));
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: string }).error, /events/);
});

test("the console's Verify (a body without events) is answered 200", async () => {
  assert.equal((await line.postRaw(JSON.stringify({ destination: line.botUserId, events: [] }))).status, 200);
});

test('a failed journal commit answers 500: LINE redelivers and the message is answered once', async () => {
  k.fake.enqueue({ text: 'answered once' });
  const undo = await refuseWrites(k.kernel.store, 'channels_inbound');
  const { webhookEventId } = line.injectMessage(user(902), { type: 'text', text: 'keep me' });
  const statuses = () => line.deliveries.filter((d) => d.webhookEventId === webhookEventId);
  try {
    await waitFor(() => statuses().some((d) => d.status === 500) || undefined, 10_000, 'the failed commit answered 500');
  } finally {
    await undo();
  }
  await waitFor(() => textsTo(line, dmId(902)).length === 1 || undefined, 10_000, 'the reply to the redelivered event');
  const seen = statuses();
  assert.equal(seen.at(-1)!.status, 200);
  assert.ok(seen.at(-1)!.isRedelivery, 'acknowledged as a redelivery');
  assert.ok(!seen.slice(0, -1).some((d) => d.status === 200), `nothing acknowledged before the commit: ${seen.map((d) => d.status).join(',')}`);
  await sleep(500);
  assert.deepEqual(textsTo(line, dmId(902)), ['answered once']);
});

test('a room is a group chat: answered when the bot is mentioned, to the room', async () => {
  const room = `R${'7'.repeat(32)}`;
  const asked = k.fake.requests.length;
  line.injectMessage({ type: 'room', roomId: room, userId: dmId(903) }, { type: 'text', text: 'among us' });
  k.fake.enqueue({ text: 'hello room' });
  line.injectMessage({ type: 'room', roomId: room, userId: dmId(903) }, { type: 'text', text: 'bot, hi', mentionSelf: true });
  await waitFor(() => textsTo(line, room).length === 1 || undefined, 10_000, 'the reply in the room');
  assert.equal(k.fake.requests.length, asked + 1, 'one turn');
  assert.deepEqual(textsTo(line, room), ['hello room']);
});
