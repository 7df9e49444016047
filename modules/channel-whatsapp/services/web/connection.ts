/**
 * A running WhatsApp Web channel: a socket on the stored account, made again inside the channels kit's reconnect loop.
 * `{connection: open}` is the ready signal (the credentials' backup is written then); a close is handled by its code
 * (close.ts): 515 makes the socket again at once, transient codes go through the loop's backoff, 401 forgets the
 * stored account and stops with last_error, 440/403/411 stop with last_error. Baileys pings WhatsApp every 30 s and
 * closes with 408 when it stops answering: that is the connection's liveness check; the loop's own watchdog is only a
 * backstop for a socket silent for half a day.
 *
 * Messages come in by `messages.upsert` and go to the journal one after another; Baileys has acknowledged them to
 * WhatsApp already, so a message whose commit fails is lost (logged), and one Baileys emits again after a reconnect is
 * dropped by the journal by its id.
 */
import type { AdapterContext, ChannelConnection, ChannelError, ChannelKit, OutboundChunk } from '@talon/channels';
import type { WaConnectionUpdate, WaCreds, WaMessagesUpsert, WaSocket, WaSocketFactory } from '@talon/channel-whatsapp';
import { channelError } from '../errors.ts';
import type { AuthStore, AuthWriter } from './auth.ts';
import { baileysLogger } from './baileys.ts';
import { closeAction, LOGGED_OUT } from './close.ts';
import { downloadFile, readWebMessage, selfJids } from './inbound.ts';
import { contentsOf, sendError, toJid } from './outbound.ts';

const NOT_SIGNED_IN = 'whatsapp web: not signed in: start the QR sign-in (POST /api/channels/whatsapp/qr/start) and scan the code with the phone';
const LIVENESS_MS = 12 * 60 * 60 * 1000;
const READY_WAIT_MS = 20_000;
/** Sockets made again at once on 515 without one opening, before the loop's backoff takes over. */
const MAX_RESTARTS = 3;
/** WhatsApp bans numbers that send in bulk: a burst of a few messages, then one a second, per chat one every 2 s. */
const PACE = { account: { capacity: 10, perSecond: 1 }, chat: { capacity: 3, perSecond: 0.5 } };

export interface WebDeps {
  factory: () => WaSocketFactory;
  auth: () => Promise<AuthStore>;
  kit: ChannelKit;
  /** The media module's conversion to Ogg/Opus, when it runs. */
  toOpus: () => ((bytes: Buffer) => Promise<Buffer>) | undefined;
}

export async function startWeb(ctx: AdapterContext, deps: WebDeps): Promise<ChannelConnection> {
  const auth = await deps.auth();
  const writer = await auth.load();
  if (!writer) throw channelError('auth', NOT_SIGNED_IN);
  return new WebConnection(ctx, deps, auth, writer).start();
}

class WebConnection {
  private live?: WaSocket;
  private current?: { sock: WaSocket; detach(): void };
  private stoppedBy?: string;
  private readonly waiters = new Set<() => void>();
  private journaled: Promise<unknown> = Promise.resolve();
  private readonly limiter: InstanceType<ChannelKit['SendLimiter']>;
  private readonly logger;

  constructor(
    private readonly ctx: AdapterContext,
    private readonly deps: WebDeps,
    private readonly auth: AuthStore,
    private readonly writer: AuthWriter,
  ) {
    this.limiter = new deps.kit.SendLimiter(PACE);
    this.logger = baileysLogger(ctx.log);
  }

  start(): ChannelConnection {
    const report = this.deps.kit.reportHealth(this.ctx);
    const loop = new this.deps.kit.Reconnector({
      connect: (link) => this.connect(link),
      teardown: () => this.closeSocket(),
      isAuthError: (err) => (err as ChannelError | undefined)?.kind === 'auth',
      livenessMs: LIVENESS_MS,
      signal: this.ctx.signal,
      onState: (health) => {
        report(health);
        if (health.state === 'stopped') {
          this.stoppedBy = health.lastError ?? 'stopped';
          this.wake();
        }
      },
    });
    const running = loop.run();
    return {
      send: (chunk) => this.send(chunk),
      typing: (target) => this.typing(target.chatId),
      stop: async () => {
        this.wake();
        await running;
      },
    };
  }

  /** One connection of the loop: resolves when the loop gives it up, rejects with why it closed. */
  private connect(link: { ready(): void; traffic(): void; signal: AbortSignal }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let restarts = 0;
      const open = async (): Promise<void> => {
        let sock: WaSocket;
        try {
          sock = await this.deps.factory().create(this.writer.state, this.logger);
        } catch (err) {
          return reject(channelError('transient', `whatsapp web: the socket could not be made: ${(err as Error).message}`));
        }
        if (link.signal.aborted) return void sock.end();
        const onCreds = (update: Partial<WaCreds>) => {
          Object.assign(this.writer.state.creds, update);
          this.writer.saveCreds().catch((err: unknown) => this.ctx.log.error({ err }, 'whatsapp web: credentials not stored'));
        };
        const onUpdate = (update: WaConnectionUpdate) => {
          if (this.current?.sock !== sock) return;
          link.traffic();
          if (update.connection === 'open') {
            this.live = sock;
            restarts = 0;
            link.ready();
            this.writer.backup().catch((err: unknown) => this.ctx.log.error({ err }, 'whatsapp web: credentials backup not stored'));
            this.wake();
          } else if (update.connection === 'close') {
            this.closeSocket();
            const action = closeAction(update);
            if (action.kind === 'restart') {
              if (++restarts > MAX_RESTARTS) reject(channelError('transient', 'whatsapp web: WhatsApp asked for a restart again and again'));
              else void open();
            } else if (action.kind === 'logged_out') void this.auth.clear().finally(() => reject(channelError('auth', LOGGED_OUT)));
            else reject(channelError(action.kind === 'stop' ? 'auth' : 'transient', action.reason));
          }
        };
        const onMessages = (upsert: WaMessagesUpsert) => {
          if (this.current?.sock !== sock) return;
          link.traffic();
          this.received(sock, upsert);
        };
        sock.ev.on('creds.update', onCreds);
        sock.ev.on('connection.update', onUpdate);
        sock.ev.on('messages.upsert', onMessages);
        this.current = {
          sock,
          detach: () => {
            sock.ev.off('creds.update', onCreds);
            sock.ev.off('connection.update', onUpdate);
            sock.ev.off('messages.upsert', onMessages);
          },
        };
      };
      link.signal.addEventListener('abort', () => resolve(), { once: true });
      void open();
    });
  }

  private closeSocket(): void {
    const current = this.current;
    this.current = undefined;
    this.live = undefined;
    if (!current) return;
    current.detach();
    void Promise.resolve(current.sock.end()).catch(() => undefined);
  }

  private received(sock: WaSocket, upsert: WaMessagesUpsert): void {
    if (upsert.type !== 'notify') return;
    const self = selfJids(sock.user);
    for (const m of upsert.messages) {
      const read = readWebMessage(m, self);
      if (!read) continue;
      this.journaled = this.journaled
        .then(async () => {
          const media = read.media ? await downloadFile(sock, m, read.media, this.ctx.log) : undefined;
          await this.ctx.emit({ ...read.message, ...(media ? { media: [media] } : {}) });
        })
        .catch((err: unknown) => this.ctx.log.error({ err, chatId: read.message.chatId }, 'a WhatsApp message could not be journaled and is lost'));
    }
  }

  private async send(chunk: OutboundChunk): Promise<{ messageId: string }> {
    const jid = toJid(chunk.chatId);
    const media = this.deps.toOpus();
    const contents = await contentsOf(chunk, { ...(media ? { toOpus: media } : {}), log: this.ctx.log });
    let messageId = '';
    for (const content of contents) {
      await this.limiter.acquire('whatsapp', jid, this.ctx.signal);
      const sock = await this.ready();
      const sent = await sock.sendMessage(jid, content).catch((err: unknown) => {
        throw sendError(err);
      });
      messageId = sent?.key.id ?? messageId;
    }
    if (!messageId) throw channelError('transient', 'whatsapp web: the send answered no message id');
    return { messageId };
  }

  /** Typing is a courtesy: a closed connection shows none, and its failure fails nothing. */
  private async typing(chatId: string): Promise<void> {
    await this.live?.sendPresenceUpdate('composing', toJid(chatId)).catch(() => undefined);
  }

  /** The open socket; waits (bounded) while the loop makes a new one. */
  private async ready(): Promise<WaSocket> {
    const deadline = Date.now() + READY_WAIT_MS;
    while (!this.live) {
      if (this.stoppedBy) throw channelError('auth', this.stoppedBy);
      if (this.ctx.signal.aborted) throw channelError('transient', 'whatsapp web: the channel is stopping');
      const left = deadline - Date.now();
      if (left <= 0) throw channelError('transient', 'whatsapp web: not connected');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.live;
  }

  private wake(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }
}
