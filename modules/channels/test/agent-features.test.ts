/**
 * What channels give agents and operators besides conversations, through a real kernel, the scripted model and the
 * Telegram adapter against the Telegram fake: the channel_send tool, owner notices, background replies to the home
 * channel, audit entries and per-channel metrics.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, startTelegramFake, waitFor, type AgentTestKernel, type TelegramFake } from '@talon/testing';

const MODULES = [
  'agents',
  'auth',
  'error-envelope',
  'secrets',
  'net',
  'tasks',
  'commands',
  'bindings',
  'tools',
  'triggers',
  'metrics',
  'audit',
  'channels',
  'channel-telegram',
];

let k: AgentTestKernel;
let tg: TelegramFake;
let helper: string;

const spawn = async (name: string, tools: string[]) => {
  const manifest = `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ${JSON.stringify(tools)}\n`;
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { agent_id: string }).agent_id;
};
const configure = async (body: Record<string, unknown>) => {
  const res = await k.request('/api/channels/telegram/configure', { method: 'POST', json: body });
  assert.equal(res.status, 200, await res.clone().text());
};
const textsTo = (chatId: number) => tg.sent.filter((m) => (m.chat as { id: number }).id === chatId).map((m) => m.text);
const message = async (agentId: string, text: string) => {
  const res = await k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: text } });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { response: string; owner_notice?: string };
};
const auditTypes = async () =>
  ((await (await k.request('/api/audit/recent?limit=200')).json()) as { entries: Array<{ event_type: string; details: string }> }).entries;

before(async () => {
  tg = await startTelegramFake();
  k = await startAgentTestKernel({ only: MODULES });
  helper = await spawn('helper', ['channel_send', 'notify_owner']);
  await configure({ token: tg.token, api_url: tg.apiRoot, agent_name: 'helper', dm_policy: 'open', default_conversation: '700', owners: ['900'] });
  await waitFor(async () => ((await (await k.request('/api/channels/telegram')).json()) as { state: string }).state === 'connected', 10_000, 'connected');
});
after(async () => {
  await k?.stop();
  await tg?.stop();
});

test('channel_send: the model calls the tool, the platform gets the text, the model gets the message ids', async () => {
  k.fake.enqueue(
    { toolCalls: [{ name: 'channel_send', input: { channel: 'telegram', recipient: '4242', message: 'hello from the tool' } }] },
    { text: 'done' },
  );
  assert.equal((await message(helper, 'tell 4242 hello')).response, 'done');
  assert.deepEqual(textsTo(4242), ['hello from the tool']);
  // The tool's result, as the model got it: the adapter's message id (Telegram's: chat id and message id).
  const result = JSON.stringify(k.fake.requests.at(-1)!.body);
  assert.ok(result.includes(`{\\"status\\":\\"sent\\",\\"channel\\":\\"telegram\\",\\"message_ids\\":[\\"4242:${tg.sent.at(-1)!.message_id}\\"]}`), result);

  // Without a recipient: the channel's default_conversation.
  k.fake.enqueue({ toolCalls: [{ name: 'channel_send', input: { channel: 'telegram', message: 'to the default chat' } }] }, { text: 'ok' });
  await message(helper, 'post it');
  assert.deepEqual(textsTo(700), ['to the default chat']);
});

test('channel_send: an unknown channel is a tool error naming it; an agent without the grant cannot use it', async () => {
  k.fake.enqueue({ toolCalls: [{ name: 'channel_send', input: { channel: 'pigeon', message: 'coo' } }] }, { text: 'sorry' });
  await message(helper, 'use pigeons');
  const body = JSON.stringify(k.fake.requests.at(-1)!.body);
  assert.match(body, /channel_send failed: channel 'pigeon' not found/);

  const plain = await spawn('plain', ['notify_owner']);
  const before = tg.sent.length;
  k.fake.enqueue({ toolCalls: [{ name: 'channel_send', input: { channel: 'telegram', recipient: '1', message: 'sneaky' } }] }, { text: 'no' });
  await message(plain, 'try it');
  assert.equal(tg.sent.length, before);
  assert.ok(!JSON.stringify(k.fake.requests.at(-2)!.body).includes('"channel_send"'), 'the tool is not offered to an agent without it');
});

test("owner notices: notify_owner reaches the channel's owners, not the chat the turn answered", async () => {
  k.fake.enqueue({ toolCalls: [{ name: 'notify_owner', input: { reason: 'disk', summary: 'almost full' } }] }, { text: 'all fine' });
  const answer = await message(helper, 'check the disk');
  assert.equal(answer.owner_notice, '[NOTIFY] disk: almost full');
  const [notice] = await waitFor(() => (textsTo(900).length ? textsTo(900) : undefined), 10_000, 'owner notice sent');
  assert.equal(notice, "Owner notice from agent 'helper':\n[NOTIFY] disk: almost full");
  assert.equal(textsTo(700).filter((t) => String(t).includes('NOTIFY')).length, 0);
});

test("a background turn's reply goes to the agent's home channel and the delivery says so", async () => {
  const res = await k.request('/api/triggers', {
    method: 'POST',
    json: { agent_id: helper, pattern: { custom: { event_type: 'wake' } }, prompt_template: 'wake up' },
  });
  assert.equal(res.status, 201, await res.clone().text());
  k.fake.enqueue({ text: 'good morning, home' });
  const scope = k.kernel.events.scope('test');
  scope.commit();
  scope.publish('custom', { type: 'wake', data: null });
  await waitFor(() => textsTo(700).includes('good morning, home') || undefined, 10_000, 'home channel reply');
  const deliveries = await waitFor(
    async () => {
      const body = (await (await k.request(`/api/agents/${helper}/deliveries`)).json()) as { deliveries: Array<{ status: string; channel: string | null }> };
      return body.deliveries.length ? body.deliveries : undefined;
    },
    10_000,
    'delivery recorded',
  );
  assert.equal(deliveries[0].status, 'delivered');
  assert.equal(deliveries[0].channel, 'telegram');
});

test('operator acts are audited: disable, enable, pairing approval, journal prune', async () => {
  for (const action of ['disable', 'enable']) assert.equal((await k.request(`/api/channels/telegram/${action}`, { method: 'PUT' })).status, 200);
  await waitFor(async () => ((await (await k.request('/api/channels/telegram')).json()) as { state: string }).state === 'connected', 10_000, 'reconnected');
  await configure({ dm_policy: 'pairing' });
  tg.injectMessage({ chat: { id: 555, type: 'private' }, from: { id: 555, is_bot: false, first_name: 'Ann' }, text: 'let me in' });
  const code = await waitFor(
    async () => {
      const body = (await (await k.request('/api/channels/telegram/pairing')).json()) as { requests: Array<{ code: string }> };
      return body.requests[0]?.code;
    },
    10_000,
    'pairing code',
  );
  assert.equal((await k.request(`/api/channels/telegram/pairing/${code}/approve`, { method: 'POST' })).status, 200);
  assert.equal((await k.request('/api/channels/journal/prune?channel=telegram', { method: 'POST' })).status, 200);
  const entries = await waitFor(
    async () => {
      const all = await auditTypes();
      return all.some((e) => e.event_type === 'channel_journal_pruned') ? all : undefined;
    },
    10_000,
    'audit entries',
  );
  const types = entries.map((e) => e.event_type);
  for (const t of ['channel_enabled', 'channel_pairing_approved', 'channel_journal_pruned', 'channel_configured'])
    assert.ok(types.includes(t), `${t} in ${types}`);
  const approved = entries.find((e) => e.event_type === 'channel_pairing_approved')!;
  assert.equal(JSON.parse(approved.details).senderId, '555');
  const enabled = entries.filter((e) => e.event_type === 'channel_enabled').map((e) => JSON.parse(e.details).enabled);
  assert.deepEqual(enabled.sort(), [false, true]);
  await configure({ dm_policy: 'open' });
});

test('GET /api/metrics carries the per-channel counters, the connection gauge and the journal backlog', async () => {
  // A refused message (a group message without a mention) and a received one, to count.
  tg.injectMessage({ chat: { id: -100, type: 'group', title: 'g' }, from: { id: 77, is_bot: false, first_name: 'Bo' }, text: 'not for the bot' });
  k.fake.enqueue({ text: 'hi there' });
  tg.injectMessage({ chat: { id: 321, type: 'private' }, from: { id: 321, is_bot: false, first_name: 'Cy' }, text: 'hello' });
  await waitFor(() => textsTo(321).includes('hi there') || undefined, 10_000, 'reply');
  const text = await waitFor(
    async () => {
      const t = await (await k.request('/api/metrics')).text();
      return /talon_channel_messages_refused_total\{channel="telegram",reason="not_mentioned",node="[^"]+"\} [1-9]/.test(t) ? t : undefined;
    },
    10_000,
    'refused counted',
  );
  const value = (line: RegExp) => Number(text.match(line)?.[1]);
  assert.ok(value(/^talon_channel_messages_received_total\{channel="telegram",node="[^"]+"\} (\d+)$/m) >= 2);
  assert.ok(value(/^talon_channel_messages_sent_total\{channel="telegram",node="[^"]+"\} (\d+)$/m) >= 5);
  assert.equal(value(/^talon_channel_send_failures_total\{channel="telegram",node="[^"]+"\} (\d+)$/m), 0);
  assert.equal(value(/^talon_channel_connected\{channel="telegram",node="[^"]+"\} (\d+)$/m), 1);
  assert.equal(value(/^talon_channel_journal_backlog\{channel="telegram",kind="failed",node="[^"]+"\} (\d+)$/m), 0);
  assert.match(text, /^talon_channel_journal_backlog\{channel="telegram",kind="inbound",node="[^"]+"\} \d+$/m);
  assert.match(text, /# TYPE talon_channel_messages_sent_total counter/);
});

test('the channel metrics survive a reload of the metrics module and of the channels module', async () => {
  const scrape = async () => (await (await k.request('/api/metrics')).text()).match(/^talon_channel_connected\{channel="telegram",node="[^"]+"\} (\d)$/m)?.[1];
  assert.equal((await k.kernel.reloadModule('metrics')).ok, true);
  assert.equal(await scrape(), '1');
  assert.equal((await k.kernel.reloadModule('channels')).ok, true);
  await waitFor(async () => (await scrape()) === '1' || undefined, 10_000, 'connected again after the reload');
});
