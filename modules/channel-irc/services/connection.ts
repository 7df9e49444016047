/**
 * One IRC channel's connection: an irc-framework client per attempt, run inside the channels kit's reconnect loop
 * (irc-framework's own reconnecting is off). Ready is RPL_WELCOME (001), after which the configured channels are
 * joined; liveness is any line from the server, and the client PINGs the server every pingIntervalS so a quiet but
 * healthy connection still has traffic. A nick in use is retried as nick_ (reported in last_error while connected); a
 * refused server password (464, or ngircd's ERROR "Bad password" before registration) stops the loop with last_error. irc-framework opens its own TCP/TLS socket, so this
 * traffic does not go through the net module: the only host it reaches is the configured `server`.
 */
import type * as IrcFramework from 'irc-framework';
import type { AdapterContext, ChannelConnection, ChannelKit, OutboundChunk } from '@talon/channels';
import type { IrcSettings } from '../config.ts';
import { channelError, isAuthError } from './errors.ts';
import { toInbound, toLines, type IrcView } from './lines.ts';

export interface IrcTuning {
  /** Seconds between the client's PINGs; the connection is rebuilt after three intervals without a line. */
  pingIntervalS: number;
  /** How long a send waits for a connection that is being rebuilt before it fails as transient. */
  readyWaitMs: number;
}

/** Flood control: a burst of five lines, then one a second — what common ircds allow before "Excess Flood". */
const FLOOD = { account: { capacity: 5, perSecond: 1 }, chat: { capacity: 5, perSecond: 1 } };
/** nick, nick_, nick__: then the attempt fails and the loop tries again later. */
const NICK_TRIES = 3;

interface Live {
  client: IrcFramework.Client;
  view: IrcView;
  /** `nick!user@host` as the server relays it (from our own JOIN), for the exact line budget. */
  hostmask?: string;
}

export function startIrc(ctx: AdapterContext, settings: IrcSettings, kit: ChannelKit, irc: typeof IrcFramework, tuning: IrcTuning): ChannelConnection {
  let live: Live | undefined;
  let client: IrcFramework.Client | undefined;
  let stoppedBy: string | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
    waiters.clear();
  };
  const limiter = new kit.SendLimiter(FLOOD);
  // Lines are journaled one after another, in the order the server sent them.
  let journaled: Promise<unknown> = Promise.resolve();

  const connect = (link: { ready(): void; traffic(): void; signal: AbortSignal }) =>
    new Promise<void>((resolve, reject) => {
      const c = new irc.Client();
      client = c;
      let nick = settings.nick;
      let registered = false;
      const view: IrcView = { nick, caseLower: (s) => c.caseLower(s), isChannel: (t) => c.network.isChannelName(t) };
      c.on('raw', (e) => {
        if (e.from_server) link.traffic();
      });
      c.on('nick in use', () => {
        if (registered) return;
        if (nick.length - settings.nick.length + 1 >= NICK_TRIES)
          return reject(channelError('transient', `the nicks ${settings.nick} to ${nick} are all in use`));
        nick += '_';
        c.changeNick(nick);
      });
      c.on('registered', (e) => {
        registered = true;
        view.nick = e.nick;
        live = { client: c, view };
        link.ready();
        for (const channel of settings.channels) c.join(channel);
        const renamed = view.caseLower(e.nick) !== view.caseLower(settings.nick);
        ctx.report('connected', renamed ? `the nick '${settings.nick}' is in use: connected as '${e.nick}'` : undefined);
        if (renamed) ctx.log.warn({ nick: settings.nick, as: e.nick }, 'IRC nick in use');
        wake();
      });
      c.on('join', (e) => {
        if (live?.client === c && view.caseLower(e.nick) === view.caseLower(view.nick)) live.hostmask = `${e.nick}!${e.ident}@${e.hostname}`;
      });
      c.on('irc error', (e) => {
        if (e.error === 'password_mismatch') reject(channelError('auth', 'the IRC server refused the password (464 ERR_PASSWDMISMATCH)'));
        // ngircd sends no 464, only "ERROR :Access denied: Bad password?" before it closes the connection.
        else if (e.error === 'irc' && !registered && /password/i.test(e.reason ?? ''))
          reject(channelError('auth', `the IRC server refused the password: ${e.reason}`));
      });
      c.on('privmsg', (e) => {
        if (!registered) return;
        const message = toInbound(e, view);
        if (!message) return;
        // IRC has no acknowledgement and never redelivers: a line whose commit fails is lost, and said so in the log.
        journaled = journaled
          .then(() => ctx.emit(message))
          .catch((err: unknown) => ctx.log.error({ err, chatId: message.chatId }, 'an IRC line could not be journaled and is lost'));
      });
      c.on('close', () => reject(new Error(registered ? 'the IRC server closed the connection' : 'the IRC server closed the connection before 001')));
      link.signal.addEventListener('abort', () => resolve(), { once: true });
      c.connect({
        host: settings.server,
        port: settings.port,
        tls: settings.tls,
        nick,
        username: settings.nick.replace(/[^A-Za-z0-9]/g, '').slice(0, 10) || 'talon',
        gecos: 'Talon',
        ...(settings.password ? { password: settings.password } : {}),
        auto_reconnect: false,
        ping_interval: tuning.pingIntervalS,
        // The loop's liveness watchdog decides; irc-framework's own ping timeout would only race it.
        ping_timeout: 0,
        version: null,
      });
    });

  const teardown = () => {
    const c = client;
    client = undefined;
    if (live?.client === c) live = undefined;
    if (!c) return;
    c.removeAllListeners();
    if (c.connected) c.quit('Talon is reconnecting');
    c.connection.transport?.disposeSocket();
  };

  const loop = new kit.Reconnector({
    connect,
    teardown,
    isAuthError,
    livenessMs: tuning.pingIntervalS * 3 * 1000,
    signal: ctx.signal,
    onState(health) {
      if (health.state === 'stopped') {
        stoppedBy = health.lastError ?? 'stopped';
        ctx.report('error', stoppedBy);
        wake();
      } else if (health.state === 'waiting') ctx.report('connecting', health.lastError ?? undefined);
    },
  });
  const running = loop.run();

  /** The live connection; waits (bounded) while the loop rebuilds one. */
  const ready = async (): Promise<Live> => {
    const deadline = Date.now() + tuning.readyWaitMs;
    while (!live) {
      if (stoppedBy) throw channelError('auth', stoppedBy);
      if (ctx.signal.aborted) throw channelError('transient', 'the IRC channel is stopping');
      const left = deadline - Date.now();
      if (left <= 0) throw channelError('transient', 'not connected to the IRC server');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return live;
  };

  const write = (c: IrcFramework.Client, target: string, text: string) =>
    new Promise<void>((resolve, reject) => {
      // Checked first: a write on a closed connection is dropped silently (its callback still runs).
      if (!c.connected) return reject(channelError('transient', 'the IRC connection closed before the line was written'));
      c.connection.write(c.rawString('PRIVMSG', target, text), (err) => (err ? reject(channelError('transient', err.message)) : resolve()));
    });

  return {
    // A PRIVMSG has no id and no acknowledgement: it counts as sent once written to the socket, and its row keeps
    // an empty platform message id.
    async send(chunk: OutboundChunk) {
      for (const line of toLines(chunk, (await ready()).view, kit, live?.hostmask)) {
        await limiter.acquire('irc', chunk.chatId, ctx.signal);
        await write((await ready()).client, chunk.chatId, line);
      }
      return { messageId: '' };
    },
    async stop() {
      wake();
      await running;
    },
  };
}
