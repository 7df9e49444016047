// The Telegram adapter in a kernel with the channels module, against the Bot API fake, through grammY: a message in →
// a turn on the scripted model → the reply sent back; group mention gating, topics, chunking, the HTML retry, typing,
// a 429's retry_after, a failing getUpdates, a second poller, bad credentials.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { channel, configure, sentTo, startTelegramEnv, until, type Env } from './helpers.ts';

let env: Env;
before(async () => {
  env = await startTelegramEnv();
});
after(() => env?.stop());

const dm = (id: number, text: string) => env.tg.injectMessage({ chat: { id, type: 'private' }, from: { id, is_bot: false, first_name: 'Ann' }, text });
const group = (id: number) => ({ id, type: 'supergroup' as const, title: 'team' });
const texts = (chatId: number) => sentTo(env.tg, chatId).map((m) => m.text);

test('a direct message comes back answered, as a reply to it, and its update is confirmed', async () => {
  env.k.fake.enqueue({ text: 'Hello **Ann**' });
  const update = dm(501, 'hi there');
  await until(() => texts(501).length === 1, 'the reply');
  assert.deepEqual(texts(501), ['Hello Ann']);
  const call = env.tg.callsOf('sendMessage').find((c) => c.params.chat_id === '501' || c.params.chat_id === 501)!;
  assert.equal(call.params.parse_mode, 'HTML');
  assert.equal(call.params.text, 'Hello <b>Ann</b>', "the model's Markdown rendered to Telegram HTML by the channels module");
  const message = update.message as { message_id: number };
  assert.equal((call.params.reply_parameters as { message_id: number }).message_id, message.message_id);
  const asked = JSON.stringify(env.k.fake.requests.at(-1)!.body.messages);
  assert.match(asked, /hi there/);
  await until(() => env.tg.pending().length === 0, 'the update confirmed by the next offset');
});

test('in a group only a mention of the bot, a /command@bot or a reply to the bot reaches the agent', async () => {
  const before = env.k.fake.requests.length;
  env.tg.injectMessage({ chat: group(-1001), text: 'just chatting' });
  await until(() => env.tg.pending().length === 0, 'the unmentioned message confirmed');
  await sleep(300);
  assert.equal(env.k.fake.requests.length, before, 'no turn for a message not addressed to the bot');

  env.k.fake.enqueue({ text: 'mentioned' }, { text: 'replied' });
  const text = 'hey @Talon_Test_Bot, help';
  env.tg.injectMessage({ chat: group(-1001), text, entities: [{ type: 'mention', offset: 4, length: 15 }] });
  await until(() => texts(-1001).length === 1, 'the answer to the mention');
  const botMessage = sentTo(env.tg, -1001)[0]!.message_id as number;
  env.tg.injectMessage({ chat: group(-1001), text: 'and then?', reply_to_message_id: botMessage });
  await until(() => texts(-1001).length === 2, 'the answer to the reply');
  assert.deepEqual(texts(-1001), ['mentioned', 'replied']);
  // Someone else's @mention is not the bot's.
  env.tg.injectMessage({ chat: group(-1001), text: '@someone look', entities: [{ type: 'mention', offset: 0, length: 8 }] });
  await until(() => env.tg.pending().length === 0, 'confirmed');
  await sleep(300);
  assert.equal(texts(-1001).length, 2);
});

test('a forum topic is a thread: the reply and the typing indicator go into the topic', async () => {
  env.k.fake.enqueue({ text: 'in the topic', delayMs: 200 });
  env.tg.injectMessage({
    chat: group(-1002),
    text: '@talon_test_bot topic question',
    entities: [{ type: 'mention', offset: 0, length: 15 }],
    message_thread_id: 77,
  });
  await until(() => texts(-1002).length === 1, 'the reply');
  assert.equal(sentTo(env.tg, -1002)[0]!.message_thread_id, 77);
  const typing = env.tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === '-1002');
  assert.ok(typing.length >= 1);
  assert.equal(typing[0]!.params.action, 'typing');
  assert.equal(Number(typing[0]!.params.message_thread_id), 77);
});

test('a reply past 4,096 UTF-16 units goes out in chunks each within the limit', async () => {
  // 🙂 is two UTF-16 units: 3,000 of them are 6,000 units, over the limit though only 3,000 characters.
  const long = Array.from({ length: 60 }, () => '🙂'.repeat(50)).join(' ');
  env.k.fake.enqueue({ text: long });
  dm(502, 'something long');
  await until(() => texts(502).join(' ').length >= long.length, 'every chunk');
  const parts = texts(502) as string[];
  assert.ok(parts.length >= 2, 'more than one message');
  for (const p of parts) assert.ok(p.length <= 4096, `chunk of ${p.length} units`);
  assert.equal(parts.join(' '), long);
});

test('HTML Telegram refuses is sent again as the plain text the channels module kept', async () => {
  env.k.fake.enqueue({ text: 'if **a** <b then c' });
  // The renderer's HTML parses; Telegram may still refuse an entity (its own limits), as here.
  env.tg.failNext('sendMessage', { error_code: 400, description: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 3" });
  dm(503, 'compare');
  await until(() => texts(503).length === 1, 'the reply');
  assert.deepEqual(texts(503), ['if a <b then c']);
  const calls = env.tg.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === '503');
  assert.equal(calls.length, 2);
  assert.equal(calls[0]!.params.parse_mode, 'HTML');
  assert.equal(calls[0]!.params.text, 'if <b>a</b> &lt;b then c');
  assert.equal(calls[1]!.params.parse_mode, undefined);
  assert.equal(calls[1]!.params.text, 'if a <b then c');
});

test('the typing indicator stops when the turn ends', async () => {
  env.k.fake.enqueue({ text: 'done', delayMs: 300 });
  dm(504, 'think');
  await until(() => texts(504).length === 1, 'the reply');
  const count = () => env.tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === '504').length;
  const shown = count();
  assert.ok(shown >= 1);
  await sleep(4_500); // past the 4 s refresh
  assert.equal(count(), shown);
});

test('a 429 waits its retry_after before the same message is sent again, once', async () => {
  env.tg.failNext('sendMessage', { error_code: 429, description: 'Too Many Requests: retry after 2', parameters: { retry_after: 2 } });
  env.k.fake.enqueue({ text: 'patient' });
  dm(505, 'hurry');
  await until(() => texts(505).length === 1, 'the reply', 15_000);
  const calls = env.tg.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === '505');
  assert.equal(calls.length, 2);
  assert.ok(calls[1]!.at - calls[0]!.at >= 1_900, `waited ${calls[1]!.at - calls[0]!.at} ms`);
  assert.deepEqual(texts(505), ['patient']);
});

test('a getUpdates failing on the server is retried: nothing lost, nothing twice', async () => {
  env.tg.failNext('getUpdates', { error_code: 502, description: 'Bad Gateway' });
  env.tg.failNext('getUpdates', { error_code: 502, description: 'Bad Gateway' });
  env.k.fake.enqueue({ text: 'r1' }, { text: 'r2' }, { text: 'r3' });
  for (const t of ['one', 'two', 'three']) dm(506, t);
  await until(() => texts(506).length === 3, 'three replies', 20_000);
  await sleep(300);
  assert.deepEqual(texts(506), ['r1', 'r2', 'r3']);
  assert.equal(env.tg.pending().length, 0);
});

test('an inbound file is downloaded through getFile and named for the agent', async () => {
  env.k.fake.enqueue({ text: 'got it' });
  env.tg.injectMessage({
    chat: { id: 507, type: 'private' },
    from: { id: 507, is_bot: false, first_name: 'Ann' },
    caption: 'see attached',
    document: { name: 'notes.txt', type: 'text/plain', content: Buffer.from('the notes') },
  });
  await until(() => texts(507).length === 1, 'the reply');
  assert.ok(env.tg.callsOf('getFile').length >= 1);
  assert.match(JSON.stringify(env.k.fake.requests.at(-1)!.body.messages), /see attached[^"]*attachment: notes\.txt \(text\/plain\)/);
});

test('a second poller on the token is reported as such; the adapter recovers when it goes', async () => {
  // Another process long-polls: Telegram ends our poll with 409 Conflict. It polls again until the conflict is seen,
  // since the adapter may be between two polls (a back-off of an earlier test) when the first one arrives.
  let reported = false;
  const other = (async () => {
    for (let i = 0; i < 10 && !reported; i++) await (await fetch(`${env.tg.apiRoot}/bot${env.tg.token}/getUpdates?timeout=1`)).text();
  })();
  await until(async () => /another process is polling/.test((await channel(env.k)).last_error ?? ''), 'the conflict reported');
  reported = true;
  assert.equal((await channel(env.k)).state, 'error');
  await other;
  await until(async () => (await channel(env.k)).state === 'connected', 'connected again', 40_000);
  env.k.fake.enqueue({ text: 'back' });
  dm(508, 'still there?');
  await until(() => texts(508).length === 1, 'the reply after recovery');
});

test('a refused token stops the adapter with last_error, the token never shown', async () => {
  await configure(env.k, { token: '999:wrong-token' });
  const state = await until(async () => {
    const c = await channel(env.k);
    return c.state === 'error' && c.last_error ? c : undefined;
  }, 'stopped');
  assert.match(state.last_error!, /401 Unauthorized/);
  assert.doesNotMatch(state.last_error!, /wrong-token/);
  const polls = env.tg.callsOf('getUpdates').length;
  await sleep(500);
  assert.equal(env.tg.callsOf('getUpdates').length, polls, 'no polling with a refused token');
});
