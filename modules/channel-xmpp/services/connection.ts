/**
 * One XMPP channel's connection: one @xmpp/client entity for the channel's life (its own reconnecting off), whose
 * socket the channels kit's reconnect loop opens again after a drop. Keeping the entity keeps its stream management
 * (XEP-0198) state, so a dropped stream is resumed where the server offers it: the server re-sends what the bot had not
 * acknowledged and the rooms stay joined. A new session (no resumption) sends initial presence, which makes the server
 * deliver the messages it stored while the bot was away, and joins the rooms again.
 *
 * Nothing is acknowledged before it is committed: the `h` the client acknowledges and resumes with counts a stanza
 * only once every stanza before it was handled and a message's emit resolved; a failed emit drops the stream so the
 * server delivers it again. Ready is the server's `online` (resource bound) or `resumed`; liveness is any element,
 * and the client pings the server every PING_MS so a quiet healthy stream has traffic. A refused password stops the
 * loop with last_error. @xmpp/client opens its own TCP/TLS socket, so this traffic does not go through the net module:
 * the only host it reaches is the configured `service`.
 */
import type * as XmppClient from '@xmpp/client';
import type { AdapterContext, ChannelConnection, ChannelKit, OutboundChunk } from '@talon/channels';
import type { XmppSettings } from '../config.ts';
import { channelError, isAuthError } from './errors.ts';
import { chatState, NS_MUC, stanzaIdOf, toInbound, toStanza, type XmppView } from './stanzas.ts';

const PING_MS = 30_000;
/** How long a send waits for a stream being rebuilt before it fails as transient. */
const READY_WAIT_MS = 20_000;
/** A `composing` not refreshed (the channels module refreshes every 4 s) nor followed by a reply turns `paused`. */
const PAUSE_AFTER_MS = 8_000;
/** SASL conditions that mean the credentials are wrong, not the connection. */
const AUTH_CONDITIONS = new Set(['not-authorized', 'account-disabled', 'credentials-expired', 'invalid-mechanism', 'encryption-required']);
const COUNTED = new Set(['message', 'presence', 'iq']);
const NS_SM = 'urn:xmpp:sm:3';
const SM_SETTLE_MS = 3_000;

export function startXmpp(ctx: AdapterContext, settings: XmppSettings, kit: ChannelKit, lib: typeof XmppClient): ChannelConnection {
  const view: XmppView = { self: `${settings.username}@${settings.domain}`.toLowerCase(), nick: settings.nick, rooms: new Set(settings.rooms) };
  const x = lib.client({ service: settings.service, domain: settings.domain, username: settings.username, password: settings.password, resource: 'talon' });
  x.reconnect.stop();
  let online = false;
  let stoppedBy: string | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
    waiters.clear();
  };
  // Stanzas are handled one after another, in the order the server sent them; `epoch` changes with each stream, so a
  // stanza of a dropped stream is not counted in the next one's `h` (the server re-sends it there instead).
  let handled: Promise<void> = Promise.resolve();
  let epoch = 0;
  let attemptError: ((err: Error) => void) | undefined;
  x.on('error', (err) => {
    if (err.name === 'SASLError' && AUTH_CONDITIONS.has(err.condition ?? ''))
      attemptError?.(channelError('auth', `the XMPP server refused the sign-in: ${err.condition}`));
    else ctx.log.warn({ err: err.message }, 'XMPP error');
  });
  x.middleware.use((context, next) => {
    const { stanza } = context;
    if (!COUNTED.has(stanza.name)) return next();
    const sm = x.streamManagement;
    const mine = epoch;
    // Counted again below once handled (the stream management module counted it on arrival).
    sm.inbound -= 1;
    const message = toInbound(stanza, view);
    handled = handled
      .then(async () => {
        if (message && mine === epoch) await ctx.emit(message);
        if (mine === epoch) sm.inbound += 1;
      })
      .catch((err: unknown) => {
        if (mine !== epoch) return;
        epoch++;
        ctx.log.error({ err, chatId: message?.chatId }, 'an XMPP message could not be journaled: the stream is dropped so the server delivers it again');
        void x.disconnect().catch(() => undefined);
      });
    return next();
  });
  x.streamManagement.on('fail', (stanza) =>
    ctx.log.warn({ id: stanza.attrs.id, to: stanza.attrs.to }, 'an XMPP stanza was not acknowledged before its stream ended and could not be resumed'),
  );

  const smSettled = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        x.removeListener('element', onElement);
        resolve();
      };
      const onElement = (el: XmppClient.Element) => {
        if (el.is('enabled', NS_SM) || el.is('failed', NS_SM)) done();
      };
      const timer = setTimeout(done, SM_SETTLE_MS);
      if (x.streamManagement.enabled) return done();
      x.on('element', onElement);
    });

  const joinRooms = async () => {
    // No history: a resumed stream never left the rooms; a new one must not answer what was said before.
    for (const room of view.rooms)
      await x.send(lib.xml('presence', { to: `${room}/${view.nick}` }, lib.xml('x', { xmlns: NS_MUC }, lib.xml('history', { maxstanzas: 0 }))));
  };

  const connect = (link: { ready(): void; traffic(): void; signal: AbortSignal }) =>
    new Promise<void>((resolve, reject) => {
      const ready = () => {
        online = true;
        link.ready();
        ctx.report('connected');
        wake();
      };
      const onOnline = () => {
        void (async () => {
          // Nothing is sent before stream management is settled: @xmpp/client announces `online` before its <enable/>
          // and miscounts the stanzas of that window, and prosody then closes the stream ("acknowledged more stanzas
          // than sent"). A server that offers no stream management answers nothing: SM_SETTLE_MS bounds the wait.
          await smSettled();
          await x.send(lib.xml('presence'));
          await joinRooms();
          ready();
        })().catch((err: Error) => reject(channelError('transient', `joining the rooms failed: ${err.message}`)));
      };
      const onElement = () => link.traffic();
      const onDisconnect = () => reject(new Error(online ? 'the XMPP server closed the stream' : 'the XMPP server closed the stream before the session began'));
      const ping = setInterval(() => {
        if (online)
          x.iqCaller.request(lib.xml('iq', { type: 'get', to: settings.domain }, lib.xml('ping', { xmlns: 'urn:xmpp:ping' })), PING_MS).catch(() => undefined);
      }, PING_MS);
      attemptError = reject;
      x.on('online', onOnline);
      x.streamManagement.on('resumed', ready);
      x.on('element', onElement);
      x.on('disconnect', onDisconnect);
      link.signal.addEventListener('abort', () => resolve(), { once: true });
      detach = () => {
        clearInterval(ping);
        attemptError = undefined;
        x.removeListener('online', onOnline);
        x.streamManagement.removeListener('resumed', ready);
        x.removeListener('element', onElement);
        x.removeListener('disconnect', onDisconnect);
      };
      x.connect(settings.service)
        .then(() => x.open({ domain: settings.domain }))
        .catch((err: Error) => reject(channelError('transient', `connecting to ${settings.service} failed: ${err.message}`)));
    });
  let detach = () => undefined as void;

  const teardown = async () => {
    detach();
    online = false;
    epoch++;
    // The socket only: the session stays resumable on the server (a stream close would end it).
    if (x.status !== 'offline' && x.status !== 'disconnect') await x.disconnect().catch(() => undefined);
  };

  const loop = new kit.Reconnector({
    connect,
    teardown,
    isAuthError,
    livenessMs: PING_MS * 3,
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

  /** Waits (bounded) while the loop rebuilds the stream. */
  const ready = async (): Promise<void> => {
    const deadline = Date.now() + READY_WAIT_MS;
    while (!online) {
      if (stoppedBy) throw channelError('auth', stoppedBy);
      if (ctx.signal.aborted) throw channelError('transient', 'the XMPP channel is stopping');
      const left = deadline - Date.now();
      if (left <= 0) throw channelError('transient', 'not connected to the XMPP server');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };

  // Chats shown `composing`, each with the timer that turns it `paused` when no refresh or reply follows.
  const composing = new Map<string, NodeJS.Timeout>();
  const keyOf = (t: { chatId: string; threadId?: string }) => `${t.chatId} ${t.threadId ?? ''}`;
  const quiet = (key: string) => {
    clearTimeout(composing.get(key));
    composing.delete(key);
  };

  return {
    // Sent once written to the stream; with stream management on, a stanza written just before a drop is re-sent by the
    // client on resumption. The row keeps the stanza id (its origin-id too), derived from the journal row.
    async send(chunk: OutboundChunk) {
      await ready();
      quiet(keyOf(chunk));
      await x.send(toStanza(lib.xml, chunk, view)).catch((err: Error) => {
        throw channelError('transient', `the XMPP stream closed before the message was written: ${err.message}`);
      });
      return { messageId: stanzaIdOf(chunk) };
    },
    async typing(target) {
      await ready();
      const key = keyOf(target);
      const shown = composing.has(key);
      clearTimeout(composing.get(key));
      composing.set(
        key,
        setTimeout(() => {
          composing.delete(key);
          if (online) x.send(chatState(lib.xml, target, 'paused', view)).catch(() => undefined);
        }, PAUSE_AFTER_MS),
      );
      // XEP-0085: a state is sent when it changes, not repeated while it holds.
      if (!shown) await x.send(chatState(lib.xml, target, 'composing', view));
    },
    async stop() {
      for (const key of [...composing.keys()]) quiet(key);
      wake();
      await running;
      // A clean close: the client acknowledges what it handled and the server ends the session.
      if (x.status !== 'offline') await x.stop().catch(() => undefined);
    },
  };
}
