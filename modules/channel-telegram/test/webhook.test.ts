// Webhook mode through a real kernel: setWebhook with the route's URL, a secret and allowed_updates; the fake POSTs
// each update to the route with X-Telegram-Bot-Api-Secret-Token; a wrong or missing secret is 401 and reaches nothing;
// the 200 comes only after the journal commit (a failed commit is a 500 and Telegram's redelivery lands once); mode
// switches set and delete the webhook.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { refuseWrites } from '@talon/testing';
import { WEBHOOK_ROUTE } from '../config.ts';
import { channel, configure, sentTo, startTelegramEnv, until, type Env } from './helpers.ts';

let env: Env;
before(async () => {
  env = await startTelegramEnv();
});
after(() => env?.stop());

const hookUrl = () => env.k.url + WEBHOOK_ROUTE;
const texts = (chatId: number) => sentTo(env.tg, chatId).map((m) => m.text);
const dm = (id: number, text: string) => env.tg.injectMessage({ chat: { id, type: 'private' }, from: { id, is_bot: false, first_name: 'Ann' }, text });
const webhookInfo = async () =>
  ((await (await fetch(`${env.tg.apiRoot}/bot${env.tg.token}/getWebhookInfo`)).json()) as { result: { url: string; allowed_updates?: string[] } }).result;
const lastSecret = () => String(env.tg.callsOf('setWebhook').at(-1)!.params.secret_token);
const toWebhook = async (extra: Record<string, unknown> = {}) => {
  const asked = env.tg.callsOf('setWebhook').length;
  await configure(env.k, { mode: 'webhook', webhook_url: hookUrl(), ...extra });
  await until(async () => env.tg.callsOf('setWebhook').length > asked && (await channel(env.k)).state === 'connected', 'the webhook set');
};
const post = (body: unknown, secret?: string) =>
  fetch(hookUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret !== undefined ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
    body: JSON.stringify(body),
  });
const update = (id: number, chat: number, text: string) => ({
  update_id: id,
  message: {
    message_id: id,
    date: Math.floor(Date.now() / 1000),
    chat: { id: chat, type: 'private' },
    from: { id: chat, is_bot: false, first_name: 'Eve' },
    text,
  },
});

test('switching modes: webhook mode sets the webhook (url, secret, allowed_updates) and takes updates through the route; polling deletes it', async () => {
  assert.equal((await post(update(1, 601, 'early'), 'x')).status, 503, 'no webhook taken while polling');
  await toWebhook();
  const call = env.tg.callsOf('setWebhook').at(-1)!;
  assert.equal(call.params.url, hookUrl());
  assert.match(lastSecret(), /^[A-Za-z0-9_-]{32,256}$/, 'a secret made when none is configured');
  assert.deepEqual((await webhookInfo()).allowed_updates, ['message']);

  env.k.fake.enqueue({ text: 'through the webhook' });
  const pushed = dm(602, 'hello by webhook');
  await until(() => texts(602).length === 1, 'the reply');
  assert.deepEqual(texts(602), ['through the webhook']);
  assert.deepEqual(
    env.tg.deliveries.filter((d) => d.update_id === pushed.update_id).map((d) => d.status),
    [200],
  );

  // Back to polling: the webhook is deleted (getUpdates would be a 409 while it is set) and polls take updates again.
  await configure(env.k, { mode: 'polling' });
  await until(async () => (await webhookInfo()).url === '' && (await channel(env.k)).state === 'connected', 'the webhook deleted');
  env.k.fake.enqueue({ text: 'by polling' });
  dm(603, 'hello by polling');
  await until(() => texts(603).length === 1, 'the reply by polling');
  assert.equal((await channel(env.k)).last_error, null);
  assert.equal((await post(update(2, 601, 'late'), lastSecret())).status, 503, 'the route refuses once polling again');
});

test('a request without the secret or with a wrong one is 401, before anything is journaled', async () => {
  await toWebhook();
  const asked = env.k.fake.requests.length;
  for (const secret of [undefined, 'wrong', lastSecret() + 'x', '']) {
    const res = await post(update(50, 604, 'let me in'), secret);
    assert.equal(res.status, 401, String(secret));
    assert.match(((await res.json()) as { error: string }).error, /x-telegram-bot-api-secret-token/);
  }
  await sleep(300);
  assert.equal(env.k.fake.requests.length, asked, 'no turn');
  const detail = (await (await env.k.request('/api/channels/telegram')).json()) as { backlog: { inbound: number }; messages_received: number };
  const received = detail.messages_received;
  // The right secret is taken (and a body missing its update_id is a 400 naming it).
  const bad = await post({ message: {} }, lastSecret());
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: string }).error, /update_id/);
  env.k.fake.enqueue({ text: 'welcome' });
  assert.equal((await post(update(51, 604, 'let me in'), lastSecret())).status, 200);
  await until(
    async () => ((await (await env.k.request('/api/channels/telegram')).json()) as { messages_received: number }).messages_received === received + 1,
    'one received',
  );
});

test('a configured webhook_secret is the one given to Telegram and is never shown', async () => {
  await toWebhook({ webhook_secret: 'my-own_secret-123' });
  assert.equal(lastSecret(), 'my-own_secret-123');
  const detail = await (await env.k.request('/api/channels/telegram')).text();
  assert.doesNotMatch(detail, /my-own_secret-123/);
  assert.match(detail, /webhook_secret/, 'named among the secrets set');
});

test('a failed journal commit answers 500: Telegram delivers again and the message is in its session once, answered once', async () => {
  await toWebhook();
  env.k.fake.enqueue({ text: 'answered once' });
  const undo = await refuseWrites(env.k.kernel.store, 'channels_inbound');
  const pushed = dm(605, 'keep me');
  const statuses = () => env.tg.deliveries.filter((d) => d.update_id === pushed.update_id).map((d) => d.status);
  try {
    await until(() => statuses().includes(500), 'the failed commit answered 500');
  } finally {
    await undo();
  }
  await until(() => texts(605).length === 1, 'the reply to the redelivered update');
  await until(() => statuses().at(-1) === 200, 'the redelivery acknowledged');
  assert.ok(!statuses().slice(0, -1).includes(200), `nothing acknowledged before the commit: ${statuses().join(',')}`);
  await sleep(500);
  const found = (await (await env.k.request(`/api/sessions/search?q=${encodeURIComponent('telegram:605')}`)).json()) as {
    items: Array<{ session_id: string }>;
  };
  assert.equal(found.items.length, 1, 'one session for the chat');
  const session = (await (await env.k.request(`/api/sessions/${found.items[0]!.session_id}`)).json()) as {
    messages: Array<{ role: string; content: unknown }>;
  };
  assert.equal(session.messages.filter((m) => m.role === 'User' && JSON.stringify(m.content).includes('keep me')).length, 1);
  assert.deepEqual(texts(605), ['answered once']);
});

test('webhook mode without webhook_url stops the channel naming the field', async () => {
  // Fields given keep their value: start from no configuration to have none.
  assert.equal((await env.k.request('/api/channels/telegram/configure', { method: 'DELETE' })).status, 200);
  await configure(env.k, { token: env.tg.token, api_url: env.tg.apiRoot, dm_policy: 'open', mode: 'webhook' });
  const c = await until(async () => {
    const s = await channel(env.k);
    return s.state === 'error' ? s : undefined;
  }, 'stopped');
  assert.match(c.last_error ?? '', /webhook_url/);
});
