/**
 * The shared channel conformance suite for the IRC adapter, against Debian's ngircd. The people on the other side are
 * raw-socket IRC clients (test/human.ts: the test sees every byte the server relays, so the 512-byte rule is checked on
 * the wire): DM `n` is a PRIVMSG to the bot from `user<n>`; group `n` is the channel #conf<n>, where a line for the bot
 * starts with "<nick>:". The server drops the bot with an operator's KILL; a second ngircd with a server password
 * refuses the bad credentials.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { channelConformance, ircServerMissing, startIrcServer, waitFor } from '@talon/testing';
import { Human } from './human.ts';

const BOT = 'talonbot';
const IRC_LINE_BYTES = 512;
/** Channels the bot joins: one per case that may stage a group (cases number from 1 and are fewer than this). */
const GROUPS = 12;
const channelOf = (n: number) => `#conf${n}`;

const missing = ircServerMissing();
if (missing) describe('channel-irc: channel conformance', { skip: missing }, () => undefined);
else
  channelConformance({
    name: 'channel-irc',
    channel: 'irc',
    only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-irc'],
    // The text of one PRIVMSG to user<n>; the whole line with the server's relay prefix is checked in received().
    limits: { maxLength: IRC_LINE_BYTES - Buffer.byteLength(`PRIVMSG user${GROUPS} :\r\n`), unit: 'bytes' },
    async harness() {
      const server = await startIrcServer({ operators: { conformance: 'oper-secret' } });
      const locked = await startIrcServer({ password: 'the-server-password' });
      const people = new Map<string, Human>();
      const person = async (nick: string) => {
        let h = people.get(nick);
        if (!h) people.set(nick, (h = await Human.connect(server.port, nick)));
        return h;
      };
      const oper = await person('operator');
      oper.send('OPER conformance oper-secret');
      await waitFor(() => oper.lines.some((l) => l.command === '381'), 10_000, 'operator status (381)');
      /** Whether the bot is on the server now (ISON, answered by 303). */
      const online = async () => {
        const seen = oper.lines.length;
        oper.send(`ISON ${BOT}`);
        const reply = await waitFor(() => oper.lines.slice(seen).find((l) => l.command === '303'), 10_000, 'ISON');
        return reply.params.at(-1)!.split(' ').includes(BOT);
      };
      /** The lines the bot sent to `target` as `to` saw them; every one within 512 bytes with prefix and CRLF. */
      const fromBot = (to: Human | undefined, target: string) => {
        const lines = to?.messages(BOT, target) ?? [];
        for (const l of lines) assert.ok(l.bytes <= IRC_LINE_BYTES, `a line of ${l.bytes} bytes on the wire`);
        return lines.map((l) => l.params[1]!);
      };
      return {
        configure: {
          server: server.host,
          port: server.port,
          tls: false,
          nick: BOT,
          channels: Array.from({ length: GROUPS }, (_, i) => channelOf(i + 1)),
        },
        badCredentials: { port: locked.port, token: 'not-the-server-password' },
        async dm(n, text) {
          (await person(`user${n}`)).say(BOT, text);
        },
        async group(n, text, { mentioned }) {
          const h = await person(`member${n}`);
          if (!h.lines.some((l) => l.command === '366' && l.params[1] === channelOf(n))) {
            await h.join(channelOf(n));
            // The bot joined on connect; a line said before its JOIN would not reach it.
            const names = h.lines.filter((l) => l.command === '353').flatMap((l) => l.params.at(-1)!.split(' '));
            if (!names.some((name) => name.replace(/^[@+]/, '') === BOT))
              await waitFor(() => h.lines.some((l) => l.command === 'JOIN' && l.prefix.startsWith(`${BOT}!`)), 15_000, `${BOT} in ${channelOf(n)}`);
          }
          h.say(channelOf(n), mentioned ? `${BOT}: ${text}` : text);
        },
        received(target) {
          if ('dm' in target) return fromBot(people.get(`user${target.dm}`), `user${target.dm}`);
          // A reply in a channel is addressed to the asker; the suite compares the text after the address.
          const address = `member${target.group}: `;
          return fromBot(people.get(`member${target.group}`), channelOf(target.group)).map((t) => (t.startsWith(address) ? t.slice(address.length) : t));
        },
        // The server ends the bot's connection (an operator's KILL); the harness returns once the bot is back, since an
        // IRC line to a nick that is not on the server is refused (401) rather than held for it.
        async dropConnection() {
          oper.send(`KILL ${BOT} :conformance drops the connection`);
          await waitFor(async () => !(await online()), 10_000, `${BOT} killed`);
          await waitFor(online, 30_000, `${BOT} back on the server`);
        },
        async stop() {
          for (const h of people.values()) h.close();
          await locked.stop();
          await server.stop();
        },
      };
    },
  });
