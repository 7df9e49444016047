// The testing kit's real servers (ngircd, dovecot, the smtp-server sink) speak their protocols to a raw socket client:
// the adapters' tests build on them, so each is checked here on its own, with what the adapters rely on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { imapServerMissing, ircServerMissing, startImapServer, startIrcServer, startSmtpSink, waitFor } from '@talon/testing';

/** A line-based client that keeps everything the server said, for bounded waits on a line. */
async function lineClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  let closed = false;
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => {});
  return {
    send: (line: string) => socket.write(`${line}\r\n`),
    lines: () => text.split('\r\n'),
    waitLine: (re: RegExp, what = String(re)) => waitFor(() => text.split('\r\n').find((l) => re.test(l)), 10_000, what),
    closed: () => closed,
    close: () => socket.destroy(),
  };
}

test('ngircd: registration needs the server password, then PRIVMSG reaches a channel member', { skip: ircServerMissing() }, async () => {
  const irc = await startIrcServer({ password: 'letmein' });
  try {
    assert.equal(irc.host, '127.0.0.1');
    const wrong = await lineClient(irc.port);
    wrong.send('PASS nope');
    wrong.send('NICK intruder');
    wrong.send('USER i 0 * :I');
    await wrong.waitLine(/^ERROR|^:\S+ 464 /, 'a refusal of the wrong password');
    await waitFor(() => wrong.closed(), 10_000, 'the server to close the refused connection');

    const bot = await lineClient(irc.port);
    const user = await lineClient(irc.port);
    for (const [client, nick] of [
      [bot, 'talonbot_with_long_nick'],
      [user, 'alice'],
    ] as const) {
      client.send('PASS letmein');
      client.send(`NICK ${nick}`);
      client.send(`USER ${nick} 0 * :${nick}`);
      // 001 carries the nick as registered: 30 characters are allowed (ngircd's default is 9).
      await client.waitLine(new RegExp(`^:${irc.name} 001 ${nick} `), `${nick} registered`);
      client.send('JOIN #talon');
      await client.waitLine(new RegExp(`^:${nick}!\\S+ JOIN :?#talon`), `${nick} joined`);
    }
    // A burst without flood penalties: all ten arrive promptly.
    for (let i = 0; i < 10; i++) user.send(`PRIVMSG #talon :talonbot_with_long_nick: hello ${i}`);
    await bot.waitLine(/^:alice!\S+ PRIVMSG #talon :talonbot_with_long_nick: hello 9$/, 'the tenth line');
  } finally {
    await irc.stop();
  }
  assert.equal(isAlive(irc.pid), false, 'ngircd is stopped by its pid');
});

test('ngircd: a client that does not answer PING is dropped after the configured timeout', { skip: ircServerMissing() }, async () => {
  const irc = await startIrcServer({ pingTimeout: 1 });
  try {
    const c = await lineClient(irc.port);
    c.send('NICK sleeper');
    c.send('USER s 0 * :S');
    await c.waitLine(/ 001 sleeper /, 'registered');
    await c.waitLine(/^PING /, 'the server PING');
    await c.waitLine(/^ERROR .*[Pp]ing timeout/, 'the ping timeout');
  } finally {
    await irc.stop();
  }
});

test('dovecot: LOGIN without TLS, IDLE reports delivered mail, wrong password refused', { skip: imapServerMissing() }, async () => {
  const imap = await startImapServer({ users: { alice: 'secret', bob: 'other' } });
  try {
    const bad = await lineClient(imap.port);
    await bad.waitLine(/^\* OK /, 'the greeting');
    bad.send('a1 LOGIN alice wrong');
    await bad.waitLine(/^a1 NO /, 'the refusal');
    bad.close();

    const c = await lineClient(imap.port);
    await c.waitLine(/^\* OK .*IDLE/, 'a greeting advertising IDLE');
    c.send('a1 LOGIN alice secret');
    await c.waitLine(/^a1 OK /, 'logged in');
    c.send('a2 SELECT INBOX');
    await c.waitLine(/^a2 OK /, 'INBOX selected');
    c.send('a3 IDLE');
    await c.waitLine(/^\+ /, 'idling');
    imap.deliver('alice', 'From: bob@talon.test\r\nTo: alice@talon.test\r\nSubject: hi\r\nMessage-ID: <m1@talon.test>\r\n\r\nhello\r\n');
    await c.waitLine(/^\* 1 EXISTS$/, 'the new mail announced during IDLE');
    c.send('DONE');
    await c.waitLine(/^a3 OK /, 'idle ended');
    c.send('a4 FETCH 1 BODY[HEADER.FIELDS (MESSAGE-ID)]');
    await c.waitLine(/^Message-ID: <m1@talon\.test>$/i, 'the delivered message');
    assert.throws(() => imap.deliver('carol', 'x'), /no IMAP user 'carol'/);
  } finally {
    await imap.stop();
  }
  assert.equal(isAlive(imap.pid), false, 'dovecot is stopped by its pid');
});

test('smtp sink: AUTH required when users are given, messages kept with their envelope', async () => {
  const smtp = await startSmtpSink({ users: { alice: 'secret' } });
  try {
    const c = await lineClient(smtp.port);
    await c.waitLine(/^220 /, 'the greeting');
    c.send('EHLO client.talon.test');
    await c.waitLine(/^250 /, 'EHLO answered');
    c.send('MAIL FROM:<alice@talon.test>');
    await c.waitLine(/^530 /, 'MAIL refused before AUTH');
    c.send(`AUTH PLAIN ${Buffer.from('\0alice\0wrong').toString('base64')}`);
    await c.waitLine(/^535 /, 'wrong password refused');
    c.send(`AUTH PLAIN ${Buffer.from('\0alice\0secret').toString('base64')}`);
    await c.waitLine(/^235 /, 'authenticated');
    c.send('MAIL FROM:<alice@talon.test>');
    c.send('RCPT TO:<bob@talon.test>');
    c.send('DATA');
    await c.waitLine(/^354 /, 'ready for data');
    c.send('Subject: hi\r\n\r\nhello\r\n.');
    await waitFor(() => smtp.messages.length === 1, 10_000, 'the message kept');
    assert.deepEqual({ ...smtp.messages[0], raw: undefined }, { from: 'alice@talon.test', to: ['bob@talon.test'], user: 'alice', raw: undefined });
    assert.match(smtp.messages[0]!.raw, /^Subject: hi\r\n\r\nhello\r\n$/);
  } finally {
    await smtp.stop();
  }
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
