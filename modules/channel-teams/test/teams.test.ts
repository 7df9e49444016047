// The adapter's Teams specifics through a real kernel and the Bot Framework fake: the bot's <at> mention taken out of
// what the agent reads and required in group chats, replies to the activity they answer (/activities/{replyToId}),
// channel reply chains kept, the client-credentials token fetched once and renewed when the connector refuses it,
// activities that are not messages acknowledged without a turn.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgentTestKernel, startTeamsFake, waitFor, type AgentTestKernel, type TeamsFake } from '@talon/testing';
import { MESSAGES_ROUTE } from '../config.ts';
import { configureFor, MODULES, textsTo } from './helpers.ts';

let k: AgentTestKernel;
let teams: TeamsFake;
const tokenRequests = () => teams.calls.filter((c) => c.method === 'token').length;

before(async () => {
  teams = await startTeamsFake();
  k = await startAgentTestKernel({ only: MODULES, config: 'log_level = "warn"' });
  await k.spawnAgent('helper');
  teams.deliverTo(k.url + MESSAGES_ROUTE);
  const res = await k.request('/api/channels/teams/configure', {
    method: 'POST',
    json: { ...configureFor(teams), agent_name: 'helper', dm_policy: 'open', group_policy: 'mention' },
  });
  assert.equal(res.status, 200, await res.text());
  await waitFor(async () => ((await (await k.request('/api/channels/teams')).json()) as { state: string }).state === 'connected', 15_000, 'connected');
});
after(async () => {
  await k?.stop();
  await teams?.stop();
});

test('in a group chat the mention is required and taken out of the text; the reply answers that activity', async () => {
  const chat = '19:mentions@thread.v2';
  const turns = k.fake.requests.length;
  assert.equal((await teams.send({ conversationId: chat, conversationType: 'groupChat', text: 'not for the bot' })).status, 200);
  k.fake.enqueue({ text: 'at your service' });
  assert.equal(
    (await teams.send({ conversationId: chat, conversationType: 'groupChat', text: 'what time is it?', mentionBot: true, id: '1700000000042' })).status,
    200,
  );
  await waitFor(() => textsTo(teams, chat).length === 1, 15_000, 'the reply');
  assert.equal(k.fake.requests.length, turns + 1, 'one turn');
  const asked = JSON.stringify(k.fake.requests.at(-1)!.body.messages);
  assert.match(asked, /what time is it\?/);
  assert.doesNotMatch(asked, /<at>/, 'the mention markup is not part of what the agent reads');
  const reply = teams.sent.find((s) => s.conversationId === chat && s.activity.type === 'message')!;
  assert.equal(reply.replyToId, '1700000000042');
  assert.equal(reply.activity.textFormat, 'markdown');
});

test("a channel reply chain is the thread: the reply goes to the conversation id with the root's ;messageid=", async () => {
  const chain = '19:general@thread.skype;messageid=1700000000100';
  k.fake.enqueue({ text: 'in the chain' });
  await teams.send({ conversationId: chain, conversationType: 'channel', text: 'thread question', mentionBot: true });
  await waitFor(() => textsTo(teams, chain).length === 1, 15_000, 'the reply in the chain');
  assert.equal(textsTo(teams, '19:general@thread.skype').length, 0, 'nothing at the channel root');
});

test('the token is fetched once for many sends; a connector 401 makes the adapter fetch a new one and the reply still arrives', async () => {
  const before = tokenRequests();
  k.fake.enqueue({ text: 'one' });
  await teams.send({ conversationId: 'a:tok-1', conversationType: 'personal', text: 'a' });
  await waitFor(() => textsTo(teams, 'a:tok-1').length === 1, 15_000, 'reply one');
  k.fake.enqueue({ text: 'two' });
  await teams.send({ conversationId: 'a:tok-2', conversationType: 'personal', text: 'b' });
  await waitFor(() => textsTo(teams, 'a:tok-2').length === 1, 15_000, 'reply two');
  assert.equal(tokenRequests(), before, 'the cached token served both (and their typing)');
  teams.failNext(401);
  k.fake.enqueue({ text: 'after a refusal' });
  await teams.send({ conversationId: 'a:tok-3', conversationType: 'personal', text: 'c' });
  await waitFor(() => textsTo(teams, 'a:tok-3').length === 1, 20_000, 'the reply with a new token');
  assert.equal(tokenRequests(), before + 1);
});

test('an activity that is not a message (conversationUpdate) is acknowledged without a turn', async () => {
  const turns = k.fake.requests.length;
  const res = await teams.send({ conversationId: 'a:update', conversationType: 'personal', text: '', type: 'conversationUpdate' });
  assert.equal(res.status, 200);
  await sleep(300);
  assert.equal(k.fake.requests.length, turns);
});

test('a body without its conversation is a 400 naming it (after the token was checked)', async () => {
  const body = teams.activity({ conversationId: 'a:x', conversationType: 'personal', text: 'x' });
  delete body.conversation;
  const now = Math.floor(Date.now() / 1000);
  const token = teams.token({ serviceurl: teams.serviceUrl, iss: 'https://api.botframework.com', aud: teams.appId, nbf: now, exp: now + 600 });
  const res = await teams.post(body, { authorization: `Bearer ${token}` });
  assert.equal(res.status, 400);
  assert.match(res.body, /conversation/);
  assert.equal((await teams.post(body, {})).status, 401, 'without a token: 401 before the body is looked at');
});

test('service_url_hosts is configurable: a bad host is a 400 naming the field, a list with a sovereign cloud is taken', async () => {
  const configure = (hosts: unknown) => k.request('/api/channels/teams/configure', { method: 'POST', json: { service_url_hosts: hosts } });
  for (const bad of [['*.com'], ['https://smba.trafficmanager.net/'], []]) {
    const res = await configure(bad);
    assert.equal(res.status, 400, JSON.stringify(bad));
    assert.match(((await res.json()) as { error: string }).error, /field 'service_url_hosts'/);
  }
  const res = await configure(['smba.trafficmanager.net', 'smba.infra.gov.teams.microsoft.us', 'smba.example.sovereign.cloud']);
  assert.equal(res.status, 200, await res.text());
  await waitFor(async () => ((await (await k.request('/api/channels/teams')).json()) as { state: string }).state === 'connected', 15_000, 'connected');
});
