import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import { configure, inject, sent, startChannels, until } from './helpers.ts';

const kernels: AgentTestKernel[] = [];
after(() => Promise.all(kernels.map((k) => k.stop())));

async function ready(keepHome = false): Promise<AgentTestKernel> {
  const k = await startChannels({ keepHome });
  kernels.push(k);
  await k.spawnAgent('helper');
  assert.equal((await configure(k, { token: 't', agent_name: 'helper', dm_policy: 'open' })).status, 200);
  return k;
}

/** The rows, or undefined while there are none (what until waits for: an empty list would end the wait). */
const nonEmpty = <T>(rows: T[]) => (rows.length ? rows : undefined);

/** The user messages of the session a channel message was adopted into, with this text (through the agents API). */
const sessionMessages = async (k: AgentTestKernel, text: string) => {
  const row = await k.kernel.store.one<{ session_id: string }>('SELECT session_id FROM channels_inbound WHERE session_id IS NOT NULL AND payload LIKE ?', [
    `%${text}%`,
  ]);
  const detail = (await (await k.request(`/api/sessions/${row!.session_id}`)).json()) as { messages: Array<{ role: string; content: string }> };
  return detail.messages.filter((m) => m.role === 'User' && m.content === text);
};

test('a DM reaches the agent once, its reply goes back to the chat; a redelivery is dropped', async () => {
  const k = await ready();
  k.fake.enqueue({ text: 'hello back' });
  assert.deepEqual(await inject(k, { platformId: 'p1', text: 'hi there' }), { duplicate: false });
  assert.deepEqual(await inject(k, { platformId: 'p1', text: 'hi there' }), { duplicate: true });
  const [reply] = await until(async () => nonEmpty((await sent(k)).filter((s) => s.text === 'hello back')), 'reply sent');
  assert.equal(reply.chatId, 'c1');
  assert.equal(reply.replyTo, 'p1');
  assert.equal((await sessionMessages(k, 'hi there')).length, 1);
  const row = await k.kernel.store.one<{ state: string }>("SELECT state FROM channels_inbound WHERE platform_id = 'p1'");
  assert.equal(row?.state, 'answered');
  const out = await k.kernel.store.many<{ state: string; message_id: string }>('SELECT state, message_id FROM channels_outbound');
  assert.ok(out.every((r) => r.state === 'sent' && r.message_id));
});

test('a crash after adoption: the next process runs the turn again, the message is in the session once; a chunk in flight becomes unknown', async () => {
  const a = await ready(true);
  a.fake.enqueue({ text: 'slow answer', delayMs: 4000 });
  await inject(a, { platformId: 'crash-1', text: 'survive me' });
  await until(
    async () => (await a.kernel.store.one<{ state: string }>("SELECT state FROM channels_inbound WHERE platform_id = 'crash-1'"))?.state === 'adopted',
    'adopted',
  );
  // A chunk the dead process was sending: its outcome is unknown (the fake platform does not deduplicate).
  const node = (await a.kernel.store.one<{ node: string }>("SELECT node FROM channels_inbound WHERE platform_id = 'crash-1'"))!.node;
  await a.kernel.store.run(
    "INSERT INTO channels_outbound (id, channel, chat_id, reply_id, seq, payload, state, node, created_at, not_after, updated_at) VALUES ('inflight', 'fake', 'c1', 'r-inflight', 0, '{}', 'sending', ?, 0, 0, 0)",
    [node],
  );
  await a.stop();
  kernels.splice(kernels.indexOf(a), 1);

  const b = await startChannels({ home: a.home, script: [{ text: 'answer after restart' }] });
  kernels.push(b);
  await until(async () => (await sent(b)).some((s) => s.text === 'answer after restart'), 'reply after restart');
  assert.equal((await sessionMessages(b, 'survive me')).length, 1, 'the user message is in the session exactly once');
  const row = await b.kernel.store.one<{ state: string }>("SELECT state FROM channels_inbound WHERE platform_id = 'crash-1'");
  assert.equal(row?.state, 'answered');
  const inflight = await until(async () => {
    const r = await b.kernel.store.one<{ state: string }>("SELECT state FROM channels_outbound WHERE id = 'inflight'");
    return r?.state === 'unknown' && r;
  }, 'unknown');
  assert.equal(inflight.state, 'unknown');
});

test('a 429 waits its retry time and the chunk is sent once, not failed', async () => {
  const k = await ready();
  await k.request('/api/test-fake/rate-limit', { method: 'POST', json: { times: 2 } });
  const res = await k.request('/api/channels/fake/test', { method: 'POST', json: { to: 'rl' } });
  assert.equal(res.status, 200);
  // Each chunk once, in order (the fake's 50-unit limit cuts the text in two).
  const texts = (await sent(k)).filter((s) => s.chatId === 'rl').map((s) => s.text);
  assert.deepEqual(texts, ['Talon channel test: this channel can deliver', 'messages.']);
  const rows = await k.kernel.store.many<{ state: string }>("SELECT state FROM channels_outbound WHERE chat_id = 'rl'");
  assert.deepEqual(
    rows.map((r) => r.state),
    ['sent', 'sent'],
  );
});

test('pairing: an unknown sender gets a code once; after the owner approves it, the sender reaches the agent', async () => {
  const k = await ready();
  assert.equal((await configure(k, { dm_policy: 'pairing' })).status, 200);
  await inject(k, { platformId: 'pp1', senderId: 'stranger', chatId: 'dm-s', text: 'let me in' });
  await inject(k, { platformId: 'pp2', senderId: 'stranger', chatId: 'dm-s', text: 'please' });
  await until(async () => nonEmpty((await sent(k)).filter((s) => s.chatId === 'dm-s')), 'code sent');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await sent(k)).filter((s) => s.chatId === 'dm-s' && s.text.startsWith('This bot')).length, 1, 'the code is sent once');
  const list = (await (await k.request('/api/channels/fake/pairing')).json()) as { requests: Array<{ code: string; sender_id: string }> };
  assert.equal(list.requests[0].sender_id, 'stranger');
  // The notice goes out in several chunks (the fake's 50-unit limit); the code is in one of them.
  const notice = async () =>
    (await sent(k))
      .filter((s) => s.chatId === 'dm-s')
      .map((c) => c.text)
      .join(' ');
  await until(async () => (await notice()).includes(list.requests[0].code) || undefined, 'the code in the notice');
  assert.equal((await k.request('/api/channels/fake/pairing/WRONGCODE/approve', { method: 'POST' })).status, 404);
  assert.equal((await k.request(`/api/channels/fake/pairing/${list.requests[0].code}/approve`, { method: 'POST' })).status, 200);
  k.fake.enqueue({ text: 'welcome' });
  await inject(k, { platformId: 'pp3', senderId: 'stranger', chatId: 'dm-s', text: 'now?' });
  await until(async () => (await sent(k)).some((s) => s.chatId === 'dm-s' && s.text === 'welcome'), 'admitted');
  const refused = await k.kernel.store.many<{ reason: string }>("SELECT reason FROM channels_inbound WHERE platform_id IN ('pp1', 'pp2')");
  assert.deepEqual(
    refused.map((r) => r.reason),
    ['pairing', 'pairing'],
  );
});

test('group messages need a mention under group_policy = mention', async () => {
  const k = await ready();
  k.fake.enqueue({ text: 'group answer' });
  await inject(k, { platformId: 'g1', chatId: 'grp', isGroup: true, text: 'chatter' });
  await inject(k, { platformId: 'g2', chatId: 'grp', isGroup: true, mentioned: true, text: '@bot hi' });
  await until(async () => (await sent(k)).some((s) => s.chatId === 'grp' && s.text === 'group answer'), 'mentioned answered');
  const g1 = await k.kernel.store.one<{ state: string; reason: string }>("SELECT state, reason FROM channels_inbound WHERE platform_id = 'g1'");
  assert.deepEqual({ ...g1 }, { state: 'refused', reason: 'not_mentioned' });
});

test('operator routes list an unknown chunk, replay it (sent once) and prune what is left', async () => {
  const k = await ready();
  const payload = JSON.stringify({ chatId: 'op', text: 'lost?', plain: 'lost?', nonce: 'n-op' });
  for (const id of ['op-1', 'op-2'])
    await k.kernel.store.run(
      "INSERT INTO channels_outbound (id, channel, chat_id, reply_id, seq, payload, state, error, created_at, not_after, updated_at) VALUES (?, 'fake', 'op', ?, 0, ?, 'unknown', 'crashed', 1, 1, 1)",
      [id, `r-${id}`, payload],
    );
  const list = (await (await k.request('/api/channels/journal/problems?channel=fake')).json()) as {
    items: Array<{ id: string; state: string; text: string }>;
    total: number;
  };
  assert.equal(list.total, 2);
  assert.equal(list.items[0].text, 'lost?');
  const replay = await k.request('/api/channels/journal/op-1/replay', { method: 'POST' });
  assert.equal(replay.status, 200);
  assert.equal(((await replay.json()) as { state: string }).state, 'sent');
  assert.equal((await sent(k)).filter((s) => s.chatId === 'op').length, 1);
  assert.equal((await k.request('/api/channels/journal/op-1/replay', { method: 'POST' })).status, 404, 'a sent chunk is not replayed');
  const pruned = await k.request('/api/channels/journal/prune?channel=fake', { method: 'POST' });
  assert.deepEqual(await pruned.json(), { status: 'pruned', deleted: 1 });
  assert.equal((await k.request('/api/channels/journal/op-2', { method: 'DELETE' })).status, 404);
});
