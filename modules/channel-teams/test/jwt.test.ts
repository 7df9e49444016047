// The Bot Framework's authentication of incoming activities, through a real kernel: every rule refuses with 401
// before anything is stored (no turn, nothing received, no conversation remembered), an unknown key id makes the
// adapter read the keys again, a serviceUrl off the allowlist is a 403, and the 200 comes only after the commit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { refuseWrites, startAgentTestKernel, startTeamsFake, waitFor, type AgentTestKernel, type TeamsFake, type TeamsSignOptions } from '@talon/testing';
import { MESSAGES_ROUTE } from '../config.ts';
import { configureFor, MODULES, textsTo } from './helpers.ts';

let k: AgentTestKernel;
let teams: TeamsFake;

const detail = async () => (await (await k.request('/api/channels/teams')).json()) as { state: string; messages_received: number; last_error: string | null };
const remembered = () => k.kernel.store.many<{ conversation_id: string }>('SELECT conversation_id FROM channel_teams_conversations');
const dm = (id: string, text: string) => ({ conversationId: `a:${id}`, conversationType: 'personal' as const, text });

before(async () => {
  teams = await startTeamsFake();
  k = await startAgentTestKernel({ only: MODULES, config: 'log_level = "warn"' });
  await k.spawnAgent('helper');
  teams.deliverTo(k.url + MESSAGES_ROUTE);
  const res = await k.request('/api/channels/teams/configure', { method: 'POST', json: { ...configureFor(teams), agent_name: 'helper', dm_policy: 'open' } });
  assert.equal(res.status, 200, await res.text());
  await waitFor(async () => (await detail()).state === 'connected', 15_000, 'teams connected');
});
after(async () => {
  await k?.stop();
  await teams?.stop();
});

/** Sends a DM signed as told and checks it is refused with `status` and a reason matching `reason`, storing nothing. */
async function refused(options: TeamsSignOptions, status: number, reason: RegExp, message = dm('refused', 'let me in')) {
  const turns = k.fake.requests.length;
  const received = (await detail()).messages_received;
  const res = await teams.send(message, options);
  assert.equal(res.status, status, res.body);
  assert.match((JSON.parse(res.body) as { error: string }).error, reason);
  await sleep(200);
  assert.equal(k.fake.requests.length, turns, 'no turn');
  assert.equal((await detail()).messages_received, received, 'nothing journaled');
  assert.ok(!(await remembered()).some((r) => r.conversation_id === message.conversationId), 'no conversation remembered');
}

test('no token, a forged signature, another audience, another issuer, an expired token: 401 and nothing stored', async () => {
  await refused({ noToken: true }, 401, /Authorization: Bearer/);
  await refused({ forge: true }, 401, /signature does not verify/);
  await refused({ audience: 'some-other-bot' }, 401, /aud claim/);
  await refused({ issuer: 'https://sts.windows.net/evil/' }, 401, /iss claim/);
  await refused({ expiresIn: -600 }, 401, /expired/);
  // Within the five minutes of clock skew the Bot Framework allows: taken.
  k.fake.enqueue({ text: 'just in time' });
  assert.equal((await teams.send(dm('skew', 'barely'), { expiresIn: -60 })).status, 200);
  await waitFor(() => textsTo(teams, 'a:skew').length === 1, 15_000, 'the reply');
});

test("a serviceurl claim other than the activity's serviceUrl is 401; a serviceUrl off the allowlist is 403", async () => {
  await refused({ serviceUrlClaim: 'https://smba.trafficmanager.net/emea/' }, 401, /serviceurl claim/);
  // Signed for the metadata host (a token that names its own serviceUrl): still refused, no request goes there.
  const evil = teams.activity(dm('evil', 'send your token here'));
  evil.serviceUrl = 'http://169.254.169.254/latest/';
  const now = Math.floor(Date.now() / 1000);
  const token = teams.token({ serviceurl: evil.serviceUrl, iss: 'https://api.botframework.com', aud: teams.appId, nbf: now, exp: now + 600 });
  const res = await teams.post(evil, { authorization: `Bearer ${token}` });
  assert.equal(res.status, 403, res.body);
  assert.match(res.body, /not a Bot Framework connector|not https/);
  assert.ok(!(await remembered()).some((r) => r.conversation_id === 'a:evil'));
});

test('a key the adapter has not seen (rotation) makes it read the keys again, and the activity is taken', async () => {
  const reads = () => teams.calls.filter((c) => c.method === 'jwks').length;
  const before = reads();
  teams.rotateKey();
  await sleep(1100); // the adapter reads the keys at most once a second
  k.fake.enqueue({ text: 'new key, same bot' });
  assert.equal((await teams.send(dm('rotated', 'signed with the new key'))).status, 200);
  assert.equal(reads(), before + 1, 'the JWKS read once more');
  await waitFor(() => textsTo(teams, 'a:rotated').length === 1, 15_000, 'the reply');
});

test("a key that does not endorse the activity's channel is 401", async () => {
  const other = teams.activity(dm('other-channel', 'from elsewhere'));
  other.channelId = 'skype';
  const now = Math.floor(Date.now() / 1000);
  const token = teams.token({ serviceurl: other.serviceUrl, iss: 'https://api.botframework.com', aud: teams.appId, nbf: now, exp: now + 600 });
  const res = await teams.post(other, { authorization: `Bearer ${token}` });
  assert.equal(res.status, 401, res.body);
  assert.match(res.body, /does not endorse channel skype/);
});

test('a failed journal commit answers 500; the delivery again is taken once and answered once', async () => {
  k.fake.enqueue({ text: 'answered once' });
  const message = { ...dm('commit', 'keep me'), id: '1700000000001' };
  const undo = await refuseWrites(k.kernel.store, 'channels_inbound');
  try {
    assert.equal((await teams.send(message)).status, 500);
  } finally {
    await undo();
  }
  assert.equal((await teams.send(message)).status, 200);
  assert.equal((await teams.send(message)).status, 200, 'a repeat is acknowledged');
  await waitFor(() => textsTo(teams, 'a:commit').length === 1, 15_000, 'the reply');
  await sleep(500);
  assert.deepEqual(textsTo(teams, 'a:commit'), ['answered once']);
});
