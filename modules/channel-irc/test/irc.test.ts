/**
 * The IRC adapter against Debian's ngircd, through a real kernel with the channels module and the scripted provider,
 * with a raw-socket IRC client as the person writing to the bot.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ircServerMissing, startAgentTestKernel, startIrcServer, waitFor, type AgentTestKernel, type IrcServer, type RecordedRequest } from '@talon/testing';
import { Human } from './human.ts';
import { Relay } from './proxy.ts';

const skip = ircServerMissing();
const BOT = 'talonbot';

interface Detail {
  state: string;
  connected: boolean;
  last_error: string | null;
}

const userTexts = (requests: RecordedRequest[]) =>
  requests.map((r) => ((r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').at(-1)?.content as string) ?? '');

describe('IRC adapter on ngircd', { skip }, () => {
  let server: IrcServer;
  let relay: Relay;
  let k: AgentTestKernel;
  let human: Human;

  const detail = async () => (await (await k.request('/api/channels/irc')).json()) as Detail;
  const configure = (body: Record<string, unknown>) => k.request('/api/channels/irc/configure', { method: 'POST', json: body });
  const botJoined = (h: Human, count: number) =>
    waitFor(() => h.lines.filter((l) => l.command === 'JOIN' && l.prefix.startsWith(`${BOT}!`)).length >= count, 15_000, `${BOT} to join #talon (${count})`);

  before(async () => {
    server = await startIrcServer({ pingTimeout: 5 });
    relay = await Relay.start(server.port);
    // A one-second PING interval: the liveness watchdog gives a silent connection up after three.
    k = await startAgentTestKernel({
      only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-irc'],
      config: '[channel_irc]\nping_interval_seconds = 1\n',
    });
    await k.spawnAgent('helper');
    human = await Human.connect(server.port, 'alice');
    await human.join('#talon');
    const res = await configure({ server: '127.0.0.1', port: relay.port, tls: false, nick: BOT, channels: ['#talon'], dm_policy: 'open' });
    assert.equal(res.status, 200, await res.text());
    await waitFor(async () => (await detail()).connected, 15_000, 'the IRC channel to connect');
    await botJoined(human, 1);
  });

  after(async () => {
    human?.close();
    await k?.stop();
    await relay?.stop();
    await server?.stop();
  });

  test('a private message is answered in the query, through an agent turn', async () => {
    k.fake.enqueue({ text: 'Hello Alice, how can I help?' });
    const before = k.fake.requests.length;
    human.say(BOT, 'hi there');
    await waitFor(() => human.messages(BOT, 'alice').length >= 1, 15_000, 'the reply in the query');
    assert.equal(human.messages(BOT, 'alice')[0].params[1], 'Hello Alice, how can I help?');
    assert.deepEqual(userTexts(k.fake.requests.slice(before)), ['hi there']);
  });

  test('two lines sent back to back are two user messages, each its own turn (no coalescing unless configured)', async () => {
    k.fake.enqueue({ text: 'reply one' }, { text: 'reply two' });
    const before = k.fake.requests.length;
    const answered = human.messages(BOT, 'alice').length;
    human.say(BOT, 'first line');
    human.say(BOT, 'second line');
    await waitFor(() => human.messages(BOT, 'alice').length >= answered + 2, 15_000, 'two replies');
    const asked = k.fake.requests.slice(before);
    assert.deepEqual(userTexts(asked), ['first line', 'second line']);
    // The second turn sees the first exchange whole: its line, the reply, then its own line.
    const history = (asked[1].body.messages as Array<{ role: string; content: unknown }>).slice(-3).map((m) => [m.role, JSON.stringify(m.content)]);
    assert.deepEqual(
      history.map(([role]) => role),
      ['user', 'assistant', 'user'],
    );
    assert.match(history[0][1], /first line/);
    assert.doesNotMatch(history[0][1], /second line/);
  });

  test('in a channel only lines addressed "<nick>:" or "<nick>," reach the agent, answered to the asker', async () => {
    k.fake.enqueue({ text: 'first answer' }, { text: 'second answer' });
    const before = k.fake.requests.length;
    human.say('#talon', 'just chatting, nobody asked the bot');
    human.say('#talon', `someone said ${BOT}: in the middle`);
    human.say('#talon', `${BOT}: what is the time?`);
    human.say('#talon', `TalonBot, and the \x02date\x02?`);
    await waitFor(() => human.messages(BOT, '#talon').length >= 2, 15_000, 'two replies in #talon');
    const asked = k.fake.requests.slice(before);
    assert.equal(asked.length, 2);
    assert.equal(userTexts(asked)[0], 'what is the time?');
    // The session holds the two addressed lines, prefix and formatting stripped, and none of the others.
    const session = JSON.stringify(asked[1].body.messages);
    assert.match(session, /and the date\?/);
    assert.doesNotMatch(session, /just chatting|in the middle|talonbot|\\u0002/i);
    assert.deepEqual(
      human.messages(BOT, '#talon').map((l) => l.params[1]),
      ['alice: first answer', 'alice: second answer'],
    );
  });

  test('a long reply goes out as 512-byte lines, whole, paced by the send limiter', async () => {
    const words = Array.from({ length: 300 }, (_, i) => `wörd${i}`);
    const text = words.join(' ');
    k.fake.enqueue({ text });
    const seen = human.messages(BOT, '#talon').length;
    human.say('#talon', `${BOT}: tell me everything`);
    const expected = (lines: number) => waitFor(() => human.messages(BOT, '#talon').length >= seen + lines, 20_000, `${lines} reply lines`);
    await expected(2);
    await waitFor(
      () =>
        human
          .messages(BOT, '#talon')
          .slice(seen)
          .map((l) => l.params[1].slice('alice: '.length))
          .join(' ') === text,
      20_000,
      'the whole reply',
    );
    const lines = human.messages(BOT, '#talon').slice(seen);
    assert.ok(lines.length > 5, `${lines.length} lines`);
    for (const l of lines) {
      assert.ok(l.bytes <= 512, `a line of ${l.bytes} bytes`);
      assert.ok(l.params[1].startsWith('alice: '));
    }
    // A burst of five, then one a second: the sixth line comes at least about a second after the first.
    assert.ok(lines[5].at - lines[0].at >= 800, `the sixth line ${lines[5].at - lines[0].at} ms after the first`);
  });

  test('no control character reaches the wire: no second command, no CTCP, no formatting', async () => {
    k.fake.enqueue({ text: 'one\r\nQUIT :gone\n\x01DCC SEND evil 0 0 0\x01 \x02bold\x02\u0000' });
    const seen = human.messages(BOT, 'alice').length;
    human.say(BOT, 'say something odd');
    await waitFor(() => human.messages(BOT, 'alice').length >= seen + 3, 15_000, 'three lines');
    const lines = human
      .messages(BOT, 'alice')
      .slice(seen)
      .map((l) => l.params[1]);
    assert.deepEqual(lines, ['one', 'QUIT :gone', 'DCC SEND evil 0 0 0 bold']);
    assert.ok(!human.lines.some((l) => l.command === 'QUIT' && l.prefix.startsWith(`${BOT}!`)), 'the bot is still on the server');
    assert.ok((await detail()).connected);
  });

  test('the server dropping the connection: reconnected and rejoined, nothing answered twice', async () => {
    const accepted = relay.accepted;
    const answered = human.messages(BOT, 'alice').length;
    relay.dropAll();
    await waitFor(async () => relay.accepted > accepted && (await detail()).connected, 20_000, 'the adapter to reconnect');
    await botJoined(human, 2);
    k.fake.enqueue({ text: 'back again' });
    human.say(BOT, 'are you there?');
    await waitFor(() => human.messages(BOT, 'alice').length > answered, 15_000, 'the reply after the reconnect');
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(
      human
        .messages(BOT, 'alice')
        .slice(answered)
        .map((l) => l.params[1]),
      ['back again'],
    );
  });

  test('a connection that stays open but carries nothing is torn down and rebuilt', async () => {
    const accepted = relay.accepted;
    relay.blackhole(true);
    try {
      await waitFor(() => relay.accepted > accepted, 15_000, 'a new connection after three silent ping intervals');
    } finally {
      relay.blackhole(false);
    }
    await waitFor(async () => (await detail()).connected, 15_000, 'connected again');
  });

  test('a nick in use: connected as nick_, said in last_error, and addressed by that nick', async () => {
    const squatter = await Human.connect(server.port, 'busybot');
    try {
      const res = await configure({ nick: 'busybot' });
      assert.equal(res.status, 200);
      await waitFor(async () => (await detail()).connected && /busybot_/.test((await detail()).last_error ?? ''), 15_000, 'connected as busybot_');
      await waitFor(() => human.lines.some((l) => l.command === 'JOIN' && l.prefix.startsWith('busybot_!')), 15_000, 'busybot_ in #talon');
      k.fake.enqueue({ text: 'yes, me' });
      human.say('#talon', 'busybot_: are you the bot?');
      await waitFor(() => human.messages('busybot_', '#talon').length >= 1, 15_000, 'the reply from busybot_');
      assert.equal(human.messages('busybot_', '#talon')[0].params[1], 'alice: yes, me');
    } finally {
      squatter.close();
    }
  });

  test('a wrong server password stops the channel with last_error and no retries', async () => {
    const locked = await startIrcServer({ password: 'sesame' });
    const gate = await Relay.start(locked.port);
    try {
      const res = await configure({ port: gate.port, nick: BOT, token: 'not-sesame' });
      assert.equal(res.status, 200);
      await waitFor(async () => (await detail()).state === 'error', 15_000, 'the channel to stop');
      const d = await detail();
      assert.equal(d.connected, false);
      assert.match(d.last_error ?? '', /password/);
      assert.doesNotMatch(JSON.stringify(d), /not-sesame/);
      await new Promise((r) => setTimeout(r, 2_500));
      assert.equal(gate.accepted, 1, 'an auth failure is not retried');
      // The right password connects.
      assert.equal((await configure({ token: 'sesame' })).status, 200);
      await waitFor(async () => (await detail()).connected, 15_000, 'connected with the right password');
    } finally {
      await configure({ port: relay.port });
      await gate.stop();
      await locked.stop();
    }
  });
});
