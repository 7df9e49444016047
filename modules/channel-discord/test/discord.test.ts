/**
 * The Discord adapter in a real kernel (channels, agents on the scripted FakeProvider) against the Discord fake
 * (REST v10 + Gateway) through @discordjs/core, rest and ws.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, startDiscordFake, waitFor, type AgentTestKernel, type DiscordFake } from '@talon/testing';

let k: AgentTestKernel;
let fake: DiscordFake;
const ALICE = { id: '900000000000000001', username: 'alice', discriminator: '0', global_name: 'Alice' };

before(async () => {
  fake = await startDiscordFake({ heartbeatInterval: 500 });
  k = await startAgentTestKernel({ only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'channels', 'channel-discord'] });
  await k.spawnAgent('helper');
});
after(async () => {
  await k?.stop();
  await fake?.stop();
});

const until = <T>(fn: () => T | Promise<T>, what: string) => waitFor(fn, 10_000, what);
const detail = async () => (await (await k.request('/api/channels/discord')).json()) as { state: string; connected: boolean; last_error: string | null };
const configure = (body: Record<string, unknown>) => k.request('/api/channels/discord/configure', { method: 'POST', json: body });
const messagesTo = (channel: string) => fake.sent.filter((m) => m.channel_id === channel);
const posts = (channel: string) => fake.calls.filter((c) => c.method === `POST /channels/${channel}/messages`);
const requestsSoFar = () => k.fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

test('configure connects on READY (the token stays a secret)', async () => {
  const res = await configure({ token: fake.token, api_url: fake.api, agent_name: 'helper', dm_policy: 'open', group_policy: 'mention' });
  assert.equal(res.status, 200);
  assert.doesNotMatch(await res.text(), new RegExp(fake.token));
  await until(async () => (await detail()).connected, 'connected');
  const identify = fake.calls.find((c) => c.method === 'gateway op 2');
  // GuildMessages | DirectMessages | MessageContent
  assert.equal((identify?.params.d as { intents: number }).intents, (1 << 9) | (1 << 12) | (1 << 15));
});

test('a direct message runs a turn and the reply goes back with a nonce Discord enforces; typing is shown', async () => {
  k.fake.enqueue({ text: 'Hello **Alice**', delayMs: 300 });
  const inbound = fake.injectMessage({ channel_id: '100', content: 'hi there', author: ALICE });
  const [reply] = await until(() => messagesTo('100').length && messagesTo('100'), 'reply in the DM');
  assert.equal(reply.content, 'Hello **Alice**');
  const post = posts('100')[0]!.params;
  assert.equal(post.enforce_nonce, true);
  assert.ok(typeof post.nonce === 'string' && post.nonce.length <= 25, 'a nonce Discord accepts (25 characters at most)');
  assert.deepEqual(post.allowed_mentions, { parse: [], replied_user: false });
  assert.deepEqual(post.message_reference, { message_id: inbound.id, fail_if_not_exists: false });
  assert.ok(
    fake.calls.some((c) => c.method === 'POST /channels/100/typing'),
    'typing shown while the turn ran',
  );
  const last = k.fake.requests.at(-1)!.body as { messages: Array<{ content: unknown }> };
  assert.match(JSON.stringify(last.messages.at(-1)), /hi there/);
});

test('in a guild only a mention or a reply to the bot reaches the agent; a thread gets its reply in the thread', async () => {
  const before = requestsSoFar();
  fake.injectMessage({ channel_id: '200', guild_id: '300', content: 'just chatting', author: ALICE });
  k.fake.enqueue({ text: 'mentioned' });
  fake.injectMessage({ channel_id: '200', guild_id: '300', content: `<@${fake.bot.id}> ping`, author: ALICE, mentions: [fake.bot] });
  await until(() => messagesTo('200').length === 1, 'reply to the mention');
  assert.equal(requestsSoFar(), before + 1, 'the unmentioned message ran no turn');
  const prompt = JSON.stringify((k.fake.requests.at(-1)!.body as { messages: unknown[] }).messages.at(-1));
  assert.match(prompt, /ping/);
  assert.doesNotMatch(prompt, /<@/, 'the mention itself is stripped');

  k.fake.enqueue({ text: 'answering your reply' });
  const botMessage = messagesTo('200')[0]!;
  fake.injectMessage({ channel_id: '200', guild_id: '300', content: 'and then?', author: ALICE, message_reference: { message_id: String(botMessage.id) } });
  await until(() => messagesTo('200').length === 2, 'reply to a reply');

  // A thread is a channel of its own: its messages carry the thread's id, the reply is posted there.
  k.fake.enqueue({ text: 'in the thread' });
  fake.injectMessage({ channel_id: '210', guild_id: '300', content: `<@${fake.bot.id}> thread question`, author: ALICE, mentions: [fake.bot] });
  await until(() => messagesTo('210').length === 1, 'reply in the thread');
  assert.equal(messagesTo('210')[0]!.content, 'in the thread');
});

test('a long reply is cut at 2,000 characters and 17 lines', async () => {
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
  k.fake.enqueue({ text: lines, chunkSize: 400 });
  fake.injectMessage({ channel_id: '110', content: 'lines please', author: ALICE });
  await until(() => messagesTo('110').length === 2, 'two messages');
  for (const m of messagesTo('110')) assert.ok(String(m.content).split('\n').length <= 17);
  assert.equal(
    messagesTo('110')
      .map((m) => m.content)
      .join('\n'),
    lines,
  );

  // 700 words of 6 characters with their space: 4,200 characters, three messages of at most 2,000.
  const words = Array.from({ length: 700 }, (_, i) => `w${String(i).padStart(4, '0')}`).join(' ');
  k.fake.enqueue({ text: words, chunkSize: 1000 });
  fake.injectMessage({ channel_id: '120', content: 'words please', author: ALICE });
  await until(
    () =>
      messagesTo('120')
        .map((m) => m.content)
        .join(' ') === words,
    'the whole reply',
  );
  assert.equal(messagesTo('120').length, 3);
  for (const m of messagesTo('120')) assert.ok([...String(m.content)].length <= 2000);
});

test('a 429 on a send is waited out for retry_after, then the reply is sent once', async () => {
  fake.rateLimitNext('POST /channels/130/messages', 1);
  k.fake.enqueue({ text: 'after the limit' });
  fake.injectMessage({ channel_id: '130', content: 'rate me', author: ALICE });
  await until(() => messagesTo('130').length === 1, 'sent after the 429');
  const [limited, sent] = posts('130');
  assert.ok(sent!.at - limited!.at >= 950, `waited ${sent!.at - limited!.at} ms of the 1 s retry_after`);
  assert.equal(posts('130').length, 2);
});

test('a dropped connection resumes: the message sent meanwhile arrives once, no socket leaks', async () => {
  fake.dropConnections();
  k.fake.enqueue({ text: 'after the drop' });
  // Held by the fake for RESUME: the session missed it.
  fake.injectMessage({ channel_id: '140', content: 'while you were away', author: ALICE });
  await until(() => messagesTo('140').length === 1, 'reply after the resume');
  assert.ok(
    fake.calls.some((c) => c.method === 'gateway op 6'),
    'RESUME was sent',
  );
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(messagesTo('140').length, 1, 'answered once');
  assert.equal(fake.openSockets(), 1);
  assert.equal((await detail()).state, 'connected');
});

test('close code 4004 stops the channel with last_error; a bad token at configure too', async () => {
  fake.dropConnections(4004);
  await until(async () => (await detail()).state === 'error', 'error state');
  assert.match((await detail()).last_error ?? '', /4004/);
  await until(() => fake.openSockets() === 0, 'no socket left open');

  await configure({ token: 'not-the-token' });
  const d = await detail();
  assert.equal(d.connected, false);
  assert.match(d.last_error ?? '', /401/);
  assert.doesNotMatch(JSON.stringify(d), /not-the-token/);

  await configure({ token: fake.token });
  await until(async () => (await detail()).connected, 'connected again');
  assert.equal((await k.request('/api/channels/discord/configure', { method: 'DELETE' })).status, 200);
  await until(() => fake.openSockets() === 0, 'the socket closed on stop');
});
