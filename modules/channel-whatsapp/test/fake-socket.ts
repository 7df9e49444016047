/**
 * A fake WhatsApp Web at Baileys' socket-event seam (the adapter's WaSocketFactory): each socket plays what WhatsApp
 * and Baileys do on the wire, as events. Fresh (unpaired) credentials get `connection.update {qr}` codes; `scan()` is
 * the phone pairing (Baileys' pair-success: the account in `creds.update`, `{isNewLogin: true}`, then a close with 515
 * restartRequired); paired credentials get `{connection: 'open'}` (unless `failNext` queued a close code). On the open
 * connection the test injects `messages.upsert`, closes it with any DisconnectReason code, and reads what was sent.
 * Closes carry a Boom-shaped error (`output.statusCode`), as Baileys' do. The adapter's auth state is used as Baileys
 * uses it: creds merged from `creds.update`, a pre-key written through the key store on the first open and read back
 * on later ones (so a restart shows whether the keys survived). Messages sent while no connection is open come with
 * the next open, as WhatsApp delivers a device's offline messages.
 */
import type { WaAuthState, WaContent, WaEvents, WaMessage, WaSocket, WaSocketFactory } from '@talon/channel-whatsapp';

export const BOT_NUMBER = '15550001111';
export const BOT_JID = `${BOT_NUMBER}:7@s.whatsapp.net`;
export const BOT_LID = '98765432100:7@lid';
/** A user's jid by number `n`, and a group's. */
export const userJid = (n: number): string => `4915100${String(n).padStart(5, '0')}@s.whatsapp.net`;
export const groupJid = (n: number): string => `1203630${String(n).padStart(5, '0')}@g.us`;

export interface SentMessage {
  jid: string;
  content: WaContent;
  id: string;
}

export interface FakeInbound {
  chat: string;
  /** In a group, the author; a DM's author is the chat. */
  from?: string;
  text?: string;
  id?: string;
  mentions?: string[];
  pushName?: string;
  media?: { kind: 'image' | 'document' | 'audio' | 'video'; mediaType: string; data: Buffer; name?: string };
}

type Listener = (arg: never) => void;

const boom = (statusCode: number, message: string) => Object.assign(new Error(message), { output: { statusCode } });

class FakeSocket implements WaSocket {
  readonly listeners = new Map<string, Set<Listener>>();
  ended = false;
  opened = false;
  qrShown = 0;

  constructor(
    readonly wa: FakeWhatsApp,
    readonly auth: WaAuthState,
    readonly serial: number,
  ) {}

  ev = {
    on: <E extends keyof WaEvents>(event: E, listener: (arg: WaEvents[E]) => void) => {
      if (!this.listeners.has(event)) this.listeners.set(event, new Set());
      this.listeners.get(event)!.add(listener as Listener);
    },
    off: <E extends keyof WaEvents>(event: E, listener: (arg: WaEvents[E]) => void) => void this.listeners.get(event)?.delete(listener as Listener),
  };

  get user() {
    return this.opened ? this.auth.creds.me : undefined;
  }

  emit<E extends keyof WaEvents>(event: E, arg: WaEvents[E]): void {
    if (this.ended && event !== 'connection.update') return;
    for (const listener of [...(this.listeners.get(event) ?? [])]) (listener as (a: WaEvents[E]) => void)(arg);
  }

  async sendMessage(jid: string, content: WaContent) {
    if (!this.opened || this.ended) throw boom(428, 'Connection Closed');
    const refusal = this.wa.refusals.shift();
    if (refusal) throw refusal;
    const id = `3EB0SENT${String(++this.wa.sentCount).padStart(6, '0')}`;
    this.wa.sent.push({ jid, content, id });
    return { key: { remoteJid: jid, fromMe: true, id } };
  }

  async sendPresenceUpdate(type: 'composing' | 'paused' | 'available' | 'unavailable', jid?: string) {
    if (!this.opened || this.ended) throw boom(428, 'Connection Closed');
    this.wa.presences.push({ type, jid: jid ?? '' });
  }

  async downloadMedia(message: WaMessage): Promise<Buffer> {
    const data = this.wa.files.get(message.key.id ?? '');
    if (!data) throw boom(404, 'media not found');
    return data;
  }

  end(error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.opened = false;
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }

  async logout(): Promise<void> {
    this.end(boom(401, 'Intentional Logout'));
  }

  showQr(): void {
    if (this.ended) return;
    this.qrShown++;
    this.emit('connection.update', { qr: `2@fake-ref-${this.serial}-${this.qrShown},${'A'.repeat(43)}=,${'B'.repeat(43)}=,${'C'.repeat(43)}=` });
  }

  async open(): Promise<void> {
    if (this.ended) return;
    const code = this.wa.closeCodes.shift();
    if (code !== undefined) return this.end(boom(code, `refused with ${code}`));
    // The keys written on the first open are read back on later ones (the auth state's key store, as Baileys uses it).
    const found = await this.auth.keys.get('pre-key', ['1']);
    this.wa.preKeyFound.push(Boolean(found['1']));
    if (!found['1']) await this.auth.keys.set({ 'pre-key': { '1': { public: Buffer.from('pub-1'), private: Buffer.from('priv-1') } } });
    if (this.ended) return;
    this.opened = true;
    this.emit('creds.update', { me: { ...this.auth.creds.me!, lid: BOT_LID } });
    this.emit('connection.update', { connection: 'open' });
    this.wa.flushOffline(this);
  }
}

export class FakeWhatsApp {
  /** How long each code lives, as the factory tells the adapter. */
  qrTtlMs = 60_000;
  /** Whether a paired socket opens by itself; off, it waits for `openWaiting()` (to see `scanned`). */
  autoOpen = true;
  readonly sockets: FakeSocket[] = [];
  readonly sent: SentMessage[] = [];
  readonly presences: Array<{ type: string; jid: string }> = [];
  readonly files = new Map<string, Buffer>();
  /** Per open of a paired socket: whether the key written at the first open was there. */
  readonly preKeyFound: boolean[] = [];
  /** Close codes the next paired sockets answer instead of opening. */
  readonly closeCodes: number[] = [];
  /** Errors the next sends throw. */
  readonly refusals: Error[] = [];
  sentCount = 0;
  private received = 0;
  private readonly offline: WaMessage[] = [];

  /** The factory as the adapter reads it at each socket (so a changed qrTtlMs applies to the next sign-in). */
  get factory(): WaSocketFactory {
    return { qrTtlMs: this.qrTtlMs, create: async (auth) => this.create(auth) };
  }

  private create(auth: WaAuthState): FakeSocket {
    const sock = new FakeSocket(this, auth, this.sockets.length + 1);
    this.sockets.push(sock);
    // Events come once the adapter listens, as Baileys' come after the WebSocket handshake.
    setTimeout(() => (auth.creds.me ? this.autoOpen && void sock.open() : sock.showQr()), 5).unref();
    return sock;
  }

  setQrTtl(ms: number): void {
    this.qrTtlMs = ms;
  }

  setAutoOpen(on: boolean): void {
    this.autoOpen = on;
  }

  /** The newest socket still running. */
  current(): FakeSocket | undefined {
    return [...this.sockets].reverse().find((s) => !s.ended);
  }

  /** The open socket (a paired one that opened). */
  open(): FakeSocket {
    const sock = this.current();
    if (!sock?.opened) throw new Error('no open WhatsApp Web socket');
    return sock;
  }

  /** The QR socket shows its next code. */
  rotate(): void {
    this.current()?.showQr();
  }

  /** WhatsApp's codes ran out before a scan: Baileys closes with 408. */
  exhaust(): void {
    this.current()?.end(boom(408, 'QR refs attempts ended'));
  }

  /** The newest socket (a QR one too) closes with this code. */
  endCurrent(code: number): void {
    this.current()?.end(boom(code, `closed with ${code}`));
  }

  /** The phone scans the code: pair-success, then WhatsApp asks for a restart (515). */
  scan(): void {
    const sock = this.current();
    if (!sock || sock.auth.creds.me) throw new Error('no QR socket to scan');
    const me = { id: BOT_JID, name: 'Talon test' };
    Object.assign(sock.auth.creds, { me, registered: true, platform: 'android' });
    sock.emit('creds.update', { me });
    sock.emit('connection.update', { isNewLogin: true, qr: undefined });
    setTimeout(() => sock.end(boom(515, 'Stream Errored (restart required)')), 5).unref();
  }

  /** Opens the paired sockets held while autoOpen is off. */
  openWaiting(): void {
    for (const s of this.sockets) if (!s.ended && !s.opened && s.auth.creds.me) void s.open();
  }

  /** Closes the open connection with a DisconnectReason code (401, 408, 428, 440, 515, …). */
  close(code: number): void {
    this.open().end(boom(code, `closed with ${code}`));
  }

  /** The next paired sockets close with these codes instead of opening. */
  failNext(...codes: number[]): void {
    this.closeCodes.push(...codes);
  }

  /** The next send is refused with WhatsApp's rate limit. */
  rateLimitNext(): void {
    this.refusals.push(boom(429, 'rate-overlimit'));
  }

  /** A message to the bot on the open connection (`messages.upsert`, notify); answers it, to emit it again. */
  inject(m: FakeInbound): WaMessage {
    const id = m.id ?? `3EB0IN${String(++this.received).padStart(8, '0')}`;
    const isGroup = m.chat.endsWith('@g.us');
    const context = m.mentions ? { contextInfo: { mentionedJid: m.mentions } } : {};
    let message: Record<string, unknown>;
    if (m.media) {
      this.files.set(id, m.media.data);
      const part = {
        mimetype: m.media.mediaType,
        fileLength: m.media.data.length,
        ...(m.media.name ? { fileName: m.media.name } : {}),
        ...(m.text ? { caption: m.text } : {}),
        ...context,
      };
      message = { [`${m.media.kind}Message`]: part };
    } else message = m.mentions ? { extendedTextMessage: { text: m.text ?? '', ...context } } : { conversation: m.text ?? '' };
    const wa: WaMessage = {
      key: { remoteJid: m.chat, fromMe: false, id, ...(isGroup ? { participant: m.from ?? userJid(999) } : {}) },
      message,
      messageTimestamp: Math.floor(Date.now() / 1000),
      pushName: m.pushName ?? 'Tester',
    };
    this.emitMessages([wa]);
    return wa;
  }

  /**
   * Messages emitted (again) on the open connection, as Baileys re-emits them after a reconnect. While no connection
   * is open WhatsApp keeps them for the device: they come with the next open.
   */
  emitMessages(messages: WaMessage[], type: 'notify' | 'append' = 'notify'): void {
    const sock = this.current();
    if (sock?.opened) sock.emit('messages.upsert', { messages, type });
    else this.offline.push(...messages);
  }

  /** Delivers what came while no connection was open. */
  flushOffline(sock: FakeSocket): void {
    const messages = this.offline.splice(0);
    if (messages.length) sock.emit('messages.upsert', { messages, type: 'notify' });
  }

  /** What went to a jid: texts, and captions of files. */
  textsTo(jid: string): string[] {
    return this.sent
      .filter((s) => s.jid === jid)
      .flatMap((s) => {
        const c = s.content as { text?: string; caption?: string };
        return c.text !== undefined ? [c.text] : c.caption !== undefined ? [c.caption] : [];
      });
  }

  /** The sockets made so far, oldest first. */
  summary(): Array<{ serial: number; ended: boolean; opened: boolean; qrShown: number; paired: boolean }> {
    return this.sockets.map((s) => ({ serial: s.serial, ended: s.ended, opened: s.opened, qrShown: s.qrShown, paired: Boolean(s.auth.creds.me) }));
  }
}
