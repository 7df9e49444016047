/**
 * channelConformance for the XMPP adapter against a real prosody on 127.0.0.1: the people on the other side are
 * @xmpp/client sessions of their own (user<n>), the groups are MUC rooms the bot joins (room<n>@conference.localhost),
 * mention gating is the bot's nick in the line, and a dropped connection is the server closing the bot's session
 * (prosody's admin shell, c2s:close) while the people keep writing.
 */
import { describe } from 'node:test';
import { channelConformance, startXmppServer, waitFor, xmppServerMissing } from '@talon/testing';
import { XMPP_LIMITS } from '../services/adapter.ts';
import { Human } from './human.ts';

const BOT = 'bot';
const NICK = 'talonbot';
/** The suite's cases use fresh numbers 1..12. */
const PEOPLE = 12;
const roomOf = (n: number) => `room${n}@conference.localhost`;

const missing = xmppServerMissing();
if (missing) describe('channel-xmpp: channel conformance', { skip: missing }, () => undefined);
else
  channelConformance({
    name: 'channel-xmpp',
    channel: 'xmpp',
    only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-xmpp'],
    limits: XMPP_LIMITS,
    async harness() {
      const accounts: Record<string, string> = { [BOT]: 'bot-password' };
      for (let n = 1; n <= PEOPLE; n++) accounts[`user${n}`] = `user${n}-password`;
      const server = await startXmppServer({ accounts });
      const people = new Map<number, Human>();
      const person = async (n: number) => {
        let h = people.get(n);
        if (!h) people.set(n, (h = await Human.connect(server.service, `user${n}`, `user${n}-password`)));
        return h;
      };
      const joined = new Set<number>();
      const sessions = async () => server.shell('c2s:show()');
      return {
        configure: {
          service: server.service,
          domain: server.domain,
          username: BOT,
          token: 'bot-password',
          nick: NICK,
          rooms: Array.from({ length: PEOPLE }, (_, i) => roomOf(i + 1)),
        },
        badCredentials: { token: 'not-the-password' },
        async dm(n, text) {
          await (await person(n)).say(`${BOT}@localhost`, text);
        },
        async group(n, text, { mentioned, thread }) {
          const h = await person(n);
          if (!joined.has(n)) {
            // The bot joined its rooms when it came online; a line said before it is in the room would not reach it.
            await h.join(roomOf(n), `user${n}`, NICK);
            joined.add(n);
          }
          await h.say(roomOf(n), mentioned ? `${NICK}: ${text}` : text, { group: true, ...(thread ? { thread } : {}) });
        },
        received(target) {
          const h = people.get('dm' in target ? target.dm : target.group);
          if (!h) return [];
          return 'dm' in target ? h.bodies(`${BOT}@localhost`, target.thread) : h.bodies(`${roomOf(target.group)}/${NICK}`, target.thread);
        },
        typings(dm) {
          return people.get(dm)?.chatStates(`${BOT}@localhost`, 'composing') ?? 0;
        },
        thread: (n) => `thread-${n}`,
        // The server ends the bot's session (a new session, not a resumption, follows); what the people write meanwhile
        // is kept by the server (offline storage) and delivered when the bot is back.
        async dropConnection() {
          await waitFor(async () => (await sessions()).includes(`${BOT}@localhost/talon`), 10_000, 'the bot online');
          await server.shell(`c2s:close('${BOT}@localhost')`);
          await waitFor(async () => !(await sessions()).includes(`${BOT}@localhost/talon`), 10_000, 'the bot session closed');
        },
        async stop() {
          for (const h of people.values()) await h.close();
          await server.stop();
        },
      };
    },
  });
