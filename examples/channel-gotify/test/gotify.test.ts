// What the conformance suite does not cover: Gotify's own rules (no redelivery, the bot's messages on its own stream).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import { startGotifyFake, type GotifyFake } from './fake-gotify.ts';
import { CONFIG, DIRECT_APPS, MODULES } from './helpers.ts';

let k: AgentTestKernel;
let gotify: GotifyFake;

const state = async () => (await (await k.request('/api/channels/gotify')).json()) as { state: string; last_error: string | null };
const configure = async (body: Record<string, unknown>) => {
  const res = await k.request('/api/channels/gotify/configure', { method: 'POST', json: body });
  assert.equal(res.status, 200, await res.text());
};
const repliesTo = (app: number) => gotify.posted().filter((m) => (m.extras?.['talon::reply'] as { chat_id?: string })?.chat_id === String(app));

before(async () => {
  gotify = await startGotifyFake();
  k = await startAgentTestKernel({ only: MODULES, config: CONFIG });
  await k.spawnAgent('helper');
  await configure({
    url: gotify.url,
    token: gotify.clientToken,
    app_token: gotify.bot.token,
    direct_apps: DIRECT_APPS,
    dm_policy: 'open',
    group_policy: 'all',
  });
  await waitFor(async () => (await state()).state === 'connected', 15_000, 'connected');
});
after(async () => {
  await k?.stop();
  await gotify?.stop();
});

test("the bot's own replies, streamed back by Gotify, are never taken as messages", async () => {
  k.fake.setFallback({ text: 'noted' });
  const asked = k.fake.requests.length;
  gotify.push(301, 'disk 91% full', 'monitor');
  await waitFor(() => repliesTo(301).length === 1, 15_000, 'the reply');
  await sleep(800);
  assert.equal(k.fake.requests.length, asked + 1, 'one turn: the reply coming back on the stream made none');
  assert.equal(repliesTo(301).length, 1);
  assert.match(JSON.stringify(k.fake.requests.at(-1)!.body.messages), /monitor\\n\\ndisk 91% full/);
});

test('messages posted while the stream is down are read back after the reconnect, each answered once', async () => {
  k.fake.setFallback({ text: 'ok' });
  // The drop is noticed by the adapter only as its socket closing; the messages come while no stream is open.
  gotify.dropStreams();
  for (const text of ['one', 'two']) gotify.push(102, text, '');
  assert.equal(gotify.openStreams(), 0, 'pushed with no stream open: only GET /message can bring them');
  await waitFor(() => repliesTo(102).length === 2, 20_000, 'both answered');
  await sleep(800);
  assert.equal(repliesTo(102).length, 2, 'nothing twice');
  assert.ok(gotify.calls.includes('GET /message'), 'caught up through GET /message');
});

test("an application token that is not the user's stops the channel with last_error", async () => {
  await configure({ app_token: 'AnotOneOfTheirs' });
  const s = await waitFor(
    async () => {
      const c = await state();
      return c.state !== 'connected' && c.state !== 'connecting' && c.last_error ? c : undefined;
    },
    15_000,
    'refused',
  );
  assert.match(s.last_error!, /app_token/);
  assert.ok(!s.last_error!.includes('AnotOneOfTheirs'), 'the secret is not shown');
});
