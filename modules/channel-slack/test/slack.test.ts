/**
 * The Slack adapter against the Slack fake (Web API + Socket Mode) with the real @slack/socket-mode and @slack/web-api,
 * through a real kernel: the channels module's journal and policy, an agent on the scripted FakeProvider.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, startSlackFake, waitFor, type AgentTestKernel, type SlackFake } from '@talon/testing';
import { MODULES } from './helpers.ts';

let k: AgentTestKernel;
let slack: SlackFake;

const until = <T>(fn: () => T | Promise<T>, what: string, ms = 15_000) => waitFor(async () => await fn(), ms, what);

async function detail(): Promise<Record<string, any>> {
  return (await (await k.request('/api/channels/slack')).json()) as Record<string, any>;
}

async function configure(body: Record<string, unknown>): Promise<Response> {
  return k.request('/api/channels/slack/configure', { method: 'POST', json: body });
}

async function configureFor(fake: SlackFake, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await configure({ token: fake.botToken, app_token: fake.appToken, api_url: fake.apiUrl, agent_name: 'helper', dm_policy: 'open', ...extra });
  assert.equal(res.status, 200, await res.clone().text());
  await until(async () => (await detail()).connected === true, 'slack connected');
}

const postsTo = (fake: SlackFake, channel: string) => fake.sent.filter((m) => m.channel === channel);
const calls = (fake: SlackFake, method: string) => fake.calls.filter((c) => c.method === method);

before(async () => {
  slack = await startSlackFake({ ackTimeoutMs: 1_500 });
  k = await startAgentTestKernel({ only: MODULES });
  await k.spawnAgent('helper');
});
after(async () => {
  await k?.stop();
  await slack?.stop();
});

test('bad credentials stop the channel with last_error naming invalid_auth; no token is echoed', async () => {
  let res = await configure({ token: 'xoxb-wrong', app_token: slack.appToken, api_url: slack.apiUrl });
  assert.equal(res.status, 200);
  let body = await detail();
  assert.equal(body.connected, false);
  assert.equal(body.state, 'error');
  assert.match(String(body.last_error), /invalid_auth/);
  // A good bot token and a bad app token: apps.connections.open refuses it.
  res = await configure({ token: slack.botToken, app_token: 'xapp-wrong' });
  const text = await res.text();
  const tokens = /xoxb-talon|xapp-1-talon|xoxb-wrong|xapp-wrong/;
  assert.doesNotMatch(text, tokens);
  body = await detail();
  assert.equal(body.connected, false);
  assert.equal(body.state, 'error', 'stopped, not retrying a refused app token');
  assert.match(String(body.last_error), /invalid_auth/);
  assert.deepEqual(body.secrets_set, { token: true, app_token: true, signing_secret: false });
  assert.deepEqual(body.secret_fields, ['token', 'app_token', 'signing_secret']);
  assert.doesNotMatch(JSON.stringify(body), tokens);
});

test('a DM round trip: the message reaches the agent, the reply goes back as mrkdwn, the envelope is acked', async () => {
  await configureFor(slack);
  assert.equal(slack.openSockets(), 1);
  k.fake.enqueue({ text: '**Hello** & <welcome>' });
  const envelope = slack.injectMessage({ channel: 'D0DM1', text: 'hi bot', channel_type: 'im' });
  await until(() => postsTo(slack, 'D0DM1').length === 1, 'the reply posted');
  assert.equal(postsTo(slack, 'D0DM1')[0]!.text, '*Hello* &amp; &lt;welcome&gt;');
  assert.equal(postsTo(slack, 'D0DM1')[0]!.thread_ts, undefined);
  assert.ok(calls(slack, 'socket ack').some((c) => c.params.envelope_id === envelope.envelope_id));
  assert.equal(slack.unacked().length, 0);
  const asked = JSON.stringify(k.fake.requests.at(-1));
  assert.match(asked, /hi bot/);
});

test('in a channel only a mention reaches the agent; the mention token is stripped', async () => {
  const before = k.fake.requests.length;
  k.fake.enqueue({ text: 'answered the mention' });
  const quiet = slack.injectMessage({ channel: 'C0GENERAL', text: 'people talking among themselves' });
  await until(() => !slack.unacked().some((e) => e.envelope_id === quiet.envelope_id), 'the unmentioned message acked');
  slack.injectMessage({ channel: 'C0GENERAL', text: `<@${slack.botUserId}> what is up`, type: 'app_mention' });
  await until(() => postsTo(slack, 'C0GENERAL').length === 1, 'the mention answered');
  assert.equal(postsTo(slack, 'C0GENERAL')[0]!.text, 'answered the mention');
  assert.equal(k.fake.requests.length, before + 1, 'one turn: the unmentioned message was refused');
  const asked = JSON.stringify(k.fake.requests.at(-1));
  assert.match(asked, /what is up/);
  assert.doesNotMatch(asked, new RegExp(slack.botUserId));
});

test('a message in a thread is answered in that thread', async () => {
  k.fake.enqueue({ text: 'threaded answer' });
  slack.injectMessage({ channel: 'C0THREADS', text: `<@${slack.botUserId}> in a thread`, thread_ts: '1700000000.000100' });
  await until(() => postsTo(slack, 'C0THREADS').length === 1, 'the thread reply');
  assert.equal(postsTo(slack, 'C0THREADS')[0]!.thread_ts, '1700000000.000100');
});

test('a long reply is cut into chunks of at most 3,000 characters, sent in order', async () => {
  const paragraphs = Array.from({ length: 8 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(180).trim()}`);
  k.fake.enqueue({ text: paragraphs.join('\n\n'), chunkSize: 500 });
  slack.injectMessage({ channel: 'D0LONG', text: 'write a lot', channel_type: 'im' });
  await until(() => postsTo(slack, 'D0LONG').length >= 3, 'the chunks posted');
  await new Promise((r) => setTimeout(r, 300));
  const posts = postsTo(slack, 'D0LONG');
  assert.equal(posts.length, 3);
  for (const p of posts) assert.ok(String(p.text).length <= 3_000, `a chunk of ${String(p.text).length}`);
  assert.match(String(posts[0]!.text), /^Paragraph 0/);
  assert.match(String(posts[2]!.text), /Paragraph 7/);
  assert.equal(posts.map((p) => String(p.text)).join('\n\n'), paragraphs.join('\n\n'));
});

test("a 429 from chat.postMessage waits Slack's Retry-After and the reply is sent once", async () => {
  k.fake.enqueue({ text: 'after the limit' });
  slack.rateLimitNext('chat.postMessage', 2);
  slack.injectMessage({ channel: 'D0LIMIT', text: 'hello', channel_type: 'im' });
  await until(() => postsTo(slack, 'D0LIMIT').length === 1, 'the reply after the 429');
  const posts = calls(slack, 'chat.postMessage').filter((c) => c.params.channel === 'D0LIMIT');
  assert.equal(posts.length, 2, 'the refused call and the one after it');
  assert.ok(posts[1]!.at - posts[0]!.at >= 2_000, `waited ${posts[1]!.at - posts[0]!.at} ms`);
});

test('a disconnect frame (refresh_requested) and a dropped socket reconnect with no loss and no duplicate', async () => {
  const opened = calls(slack, 'apps.connections.open').length;
  slack.disconnectAll('refresh_requested', 50);
  await until(() => calls(slack, 'apps.connections.open').length > opened && slack.openSockets() === 1, 'a new socket after the refresh');
  await until(async () => (await detail()).connected === true, 'connected again');
  k.fake.enqueue({ text: 'after the refresh' });
  slack.injectMessage({ channel: 'D0REFRESH', text: 'still there?', channel_type: 'im' });
  await until(() => postsTo(slack, 'D0REFRESH').length === 1, 'answered after the refresh');

  // A drop with a message sent into it: Slack sends the unacked envelope again on the next connection.
  k.fake.enqueue({ text: 'after the drop' });
  slack.dropConnections();
  const lost = slack.injectMessage({ channel: 'D0DROP', text: 'sent while down', channel_type: 'im' });
  await until(() => postsTo(slack, 'D0DROP').length === 1, 'the message sent into the drop answered');
  await until(() => !slack.unacked().some((e) => e.envelope_id === lost.envelope_id), 'its envelope acked');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(postsTo(slack, 'D0DROP').length, 1);
  assert.equal(slack.openSockets(), 1, 'no socket leaked');
});

test('an envelope Slack sends again before the ack arrives is stored and answered once', async () => {
  // Slack resends an envelope not acked in time; with a 1 ms ack timeout every envelope arrives several times.
  const eager = await startSlackFake({ ackTimeoutMs: 1, maxRetries: 3 });
  try {
    await configureFor(eager);
    const turns = k.fake.requests.length;
    k.fake.enqueue({ text: 'once only' });
    eager.injectMessage({ channel: 'D0EAGER', text: 'hello once', channel_type: 'im' });
    await until(() => postsTo(eager, 'D0EAGER').length === 1, 'answered');
    await until(() => eager.calls.filter((c) => c.method === 'socket ack').length >= 2, 'the copies acked');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(postsTo(eager, 'D0EAGER').length, 1);
    assert.equal(k.fake.requests.length, turns + 1);
    assert.equal((await detail()).messages_received >= 1, true);
  } finally {
    await configureFor(slack);
    await eager.stop();
  }
});

test('an upload into a thread goes through the upload flow with channel_id and thread_ts', async () => {
  const channels = k.kernel.services.view<{ send(m: object): Promise<{ messageIds: string[] }> }>('channels.service');
  const data = Buffer.from('thread notes');
  const sent = await channels.send({
    channel: 'slack',
    chatId: 'C0FILES',
    threadId: '1700000000.000900',
    text: '',
    media: [{ mediaType: 'text/plain', name: 'notes.txt', data: data.toString('base64') }],
  });
  const upload = slack.uploads.find((u) => u.channel === 'C0FILES');
  assert.ok(upload, 'shared into the channel');
  assert.equal(upload.thread_ts, '1700000000.000900');
  assert.equal(upload.name, 'notes.txt');
  assert.deepEqual(upload.data, data);
  assert.deepEqual(sent.messageIds, [upload.id], "Slack's file id is the chunk's message id");
  const flow = slack.calls.filter((c) => ['files.getUploadURLExternal', 'file upload', 'files.completeUploadExternal'].includes(c.method)).map((c) => c.method);
  assert.deepEqual(flow.slice(-3), ['files.getUploadURLExternal', 'file upload', 'files.completeUploadExternal']);
  const complete = calls(slack, 'files.completeUploadExternal').at(-1)!.params;
  assert.equal(complete.channel_id, 'C0FILES');
  assert.equal(complete.thread_ts, '1700000000.000900');
});

test('an inbound file over 10 MB is named for the agent, not downloaded', async () => {
  const downloads = calls(slack, 'file download').length;
  k.fake.enqueue({ text: 'too big to read' });
  slack.injectMessage({
    channel: 'D0BIGFILE',
    channel_type: 'im',
    text: 'here is the dump',
    files: [{ name: 'dump.bin', mimetype: 'application/octet-stream', data: Buffer.alloc(10 * 1024 * 1024 + 1) }],
  });
  await until(() => postsTo(slack, 'D0BIGFILE').length === 1, 'the reply');
  assert.equal(calls(slack, 'file download').length, downloads, 'not fetched');
  const asked = JSON.stringify(k.fake.requests.at(-1));
  assert.match(asked, /dump\.bin/);
  assert.ok(asked.length < 1024 * 1024, 'no content sent to the model');
});

test('a small inbound document is downloaded with the bot token and reaches the agent', async () => {
  const downloads = calls(slack, 'file download').length;
  k.fake.enqueue({ text: 'read it' });
  slack.injectMessage({
    channel: 'D0DOC',
    channel_type: 'im',
    text: 'see attached',
    files: [{ name: 'notes.txt', mimetype: 'text/plain', data: Buffer.from('the notes') }],
  });
  await until(() => postsTo(slack, 'D0DOC').length === 1, 'the reply');
  assert.equal(calls(slack, 'file download').length, downloads + 1);
  assert.match(JSON.stringify(k.fake.requests.at(-1)), /notes\.txt/);
});
