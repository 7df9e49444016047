/**
 * HTTP mode: Slack POSTs Events API requests to the service's route, signed with the signing secret. Every request is
 * verified before anything is stored (a bad or stale signature is a 401 and no turn), the url_verification handshake
 * is answered, a retry (X-Slack-Retry-Num) of a stored event is answered 200 and stored once, and the 200 comes only
 * after the journal commit (a failed commit answers 503, so Slack sends it again).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { refuseWrites, startAgentTestKernel, startSlackFake, waitFor, type AgentTestKernel, type SlackFake } from '@talon/testing';
import { EVENTS_PATH } from '../routes/events.ts';
import { MODULES } from './helpers.ts';

let k: AgentTestKernel;
let slack: SlackFake;

const detail = async () => (await (await k.request('/api/channels/slack')).json()) as { state: string; connected: boolean; last_error: string | null };
const postsTo = (channel: string) => slack.sent.filter((m) => m.channel === channel);
const deliveries = () => slack.calls.filter((c) => c.method === 'http delivery');

/** An event_callback body as Slack sends it. */
function eventBody(channel: string, text: string, ts: string, eventId = `Ev${ts.replace('.', '')}`): string {
  const event = { type: 'message', channel_type: 'im', user: 'U0ALICE', text, ts, channel, event_ts: ts, team: 'T0TALON' };
  return JSON.stringify({
    token: 'x',
    team_id: 'T0TALON',
    api_app_id: 'A0TALON',
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
  });
}

/** POSTs a raw body to the events route (no API key: the route is public). */
const post = (body: string, headers: Record<string, string>) =>
  fetch(k.url + EVENTS_PATH, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

async function configure(extra: Record<string, unknown>): Promise<void> {
  const res = await k.request('/api/channels/slack/configure', {
    method: 'POST',
    json: {
      mode: 'http',
      token: slack.botToken,
      signing_secret: slack.signingSecret,
      api_url: slack.apiUrl,
      agent_name: 'helper',
      dm_policy: 'open',
      ...extra,
    },
  });
  assert.equal(res.status, 200, await res.text());
}

before(async () => {
  slack = await startSlackFake({ ackTimeoutMs: 1_000 });
  k = await startAgentTestKernel({ only: MODULES, config: 'log_level = "warn"' });
  await k.spawnAgent('helper');
  slack.deliverTo(k.url + EVENTS_PATH);
  await configure({});
  await waitFor(async () => (await detail()).connected, 15_000, 'slack connected in http mode');
});
after(async () => {
  await k?.stop();
  await slack?.stop();
});

test("the url_verification handshake is answered with Slack's challenge", async () => {
  assert.deepEqual(await slack.verifyUrl('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P'), {
    status: 200,
    body: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' },
  });
});

test('a DM round trip over HTTP: the event is answered 200, the reply posted', async () => {
  k.fake.enqueue({ text: 'hello over http' });
  slack.injectMessage({ channel: 'D0HTTP1', channel_type: 'im', text: 'hi over http' });
  await waitFor(() => postsTo('D0HTTP1').length === 1, 15_000, 'the reply');
  assert.equal(postsTo('D0HTTP1')[0]!.text, 'hello over http');
  assert.deepEqual(
    deliveries().map((d) => d.params.status),
    [200],
  );
  assert.equal(slack.unacked().length, 0);
});

test('a bad signature, a stale timestamp and a missing signature are 401 and store nothing', async () => {
  const turns = k.fake.requests.length;
  const body = eventBody('D0FORGED', 'forged', '1700000001.000100');
  const forged = { ...slack.signedHeaders(body), 'X-Slack-Signature': `v0=${'0'.repeat(64)}` };
  let res = await post(body, forged);
  assert.equal(res.status, 401);
  assert.match(((await res.json()) as { error: string }).error, /x-slack-signature does not match/);
  // Signed with the right secret six minutes ago: a replay outside Slack's five-minute window.
  res = await post(body, slack.signedHeaders(body, Date.now() - 6 * 60_000));
  assert.equal(res.status, 401);
  assert.match(((await res.json()) as { error: string }).error, /outside the 5-minute window/);
  res = await post(body, {});
  assert.equal(res.status, 401);
  // A signature over other bytes than those sent.
  res = await post(body.replace('forged', 'tampered'), slack.signedHeaders(body));
  assert.equal(res.status, 401);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(k.fake.requests.length, turns, 'no turn');
  const found = (await (await k.request(`/api/sessions/search?q=${encodeURIComponent('slack:D0FORGED')}`)).json()) as { items: unknown[] };
  assert.equal(found.items.length, 0, 'no session');
});

test('a signed body that is not an event request is a 400 naming what is wrong', async () => {
  const body = '{"type":"event_callback","event":"nope"}';
  const res = await post(body, slack.signedHeaders(body));
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /^event:/);
});

test('a retry (X-Slack-Retry-Num) of a stored event is answered 200 and makes no second turn', async () => {
  const turns = k.fake.requests.length;
  k.fake.enqueue({ text: 'answered once' });
  const body = eventBody('D0RETRY', 'say it once', '1700000002.000200');
  let res = await post(body, slack.signedHeaders(body));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { ok: true, duplicate: false });
  res = await post(body, { ...slack.signedHeaders(body), 'X-Slack-Retry-Num': '1', 'X-Slack-Retry-Reason': 'http_timeout' });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { ok: true, duplicate: true });
  await waitFor(() => postsTo('D0RETRY').length === 1, 15_000, 'the reply');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(postsTo('D0RETRY').length, 1);
  assert.equal(k.fake.requests.length, turns + 1);
});

test('the 200 comes only after the journal commit: a failed commit is a 503, and the retry is stored once', async () => {
  k.fake.enqueue({ text: 'after the retry' });
  const before = deliveries().length;
  const undo = await refuseWrites(k.kernel.store, 'channels_inbound');
  try {
    slack.injectMessage({ channel: 'D0COMMIT', channel_type: 'im', text: 'keep me' });
    await waitFor(() => deliveries().length > before, 10_000, 'the first delivery');
  } finally {
    await undo();
  }
  assert.equal(deliveries()[before]!.params.status, 503, 'not acknowledged while the commit fails');
  await waitFor(() => postsTo('D0COMMIT').length === 1, 15_000, 'the reply to the retry');
  const mine = deliveries().slice(before);
  assert.deepEqual(
    mine.map((d) => [d.params.retry_num, d.params.status]),
    [
      [0, 503],
      [1, 200],
    ],
  );
  const found = (await (await k.request(`/api/sessions/search?q=${encodeURIComponent('slack:D0COMMIT')}`)).json()) as { items: Array<{ session_id: string }> };
  assert.equal(found.items.length, 1);
  const session = (await (await k.request(`/api/sessions/${found.items[0]!.session_id}`)).json()) as { messages: Array<{ role: string; content: unknown }> };
  assert.equal(session.messages.filter((m) => m.role === 'User' && JSON.stringify(m.content).includes('keep me')).length, 1);
});

test('HTTP mode without a signing secret stops with last_error naming it; in Socket Mode the route answers 503', async () => {
  await configure({ mode: 'socket', app_token: slack.appToken });
  await waitFor(async () => (await detail()).connected, 15_000, 'socket mode connected');
  const body = eventBody('D0SOCKET', 'wrong door', '1700000003.000300');
  const res = await post(body, slack.signedHeaders(body));
  assert.equal(res.status, 503);

  assert.equal((await k.request('/api/channels/slack/configure', { method: 'DELETE' })).status, 200);
  const again = await k.request('/api/channels/slack/configure', { method: 'POST', json: { mode: 'http', token: slack.botToken, api_url: slack.apiUrl } });
  assert.equal(again.status, 200);
  const state = await detail();
  assert.equal(state.connected, false);
  assert.equal(state.state, 'error');
  assert.match(String(state.last_error), /signing_secret/);
  await configure({});
  await waitFor(async () => (await detail()).connected, 15_000, 'back in http mode');
});
