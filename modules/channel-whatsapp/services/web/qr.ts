/**
 * A WhatsApp Web QR sign-in: a socket with fresh credentials, kept in memory until the phone has linked it (a sign-in
 * that is never scanned leaves the stored account alone). Baileys' `connection.update` events drive it:
 *   {qr}                → pending, the code shown; each new code replaces it and its expiry (WhatsApp rotates them)
 *   {isNewLogin: true}  → scanned (the phone paired); WhatsApp then closes with 515 and the socket is made again
 *   {connection: open}  → authenticated: the credentials and keys are stored (with their backup), this socket closes,
 *                          and the channel starts on the stored account
 *   close 401           → failed, logged out; 408 before a scan (WhatsApp's codes ran out) → expired
 * A code nobody scans before it expires, with no next one, is expired too. Other closes make the socket again, a few
 * times, then fail with the cause.
 */
import { HttpError } from '@talon/module-sdk';
import type { QrSession } from '@talon/channels';
import type { WaConnectionUpdate, WaCreds, WaKeyStore, WaLogger, WaSocket, WaSocketFactory } from '@talon/channel-whatsapp';
import { AuthStore } from './auth.ts';
import { closeAction, LOGGED_OUT, statusCodeOf } from './close.ts';

type QrStatus = ReturnType<QrSession['status']>['status'];

export interface QrDeps {
  factory: WaSocketFactory;
  freshCreds: () => WaCreds;
  auth: AuthStore;
  logger: WaLogger;
  /** How long to wait for the first code (FIRST_CODE_MS; shorter in tests). */
  firstCodeMs?: number;
}

/** How long the sign-in waits for WhatsApp's first code before it answers an error. */
const FIRST_CODE_MS = 30_000;
/** Past a code's expiry, how long the next one may take to come before the sign-in counts as expired. */
const QR_GRACE_MS = 2_000;
/** Sockets made again within one sign-in (515 after the pairing, a dropped connection) before it fails. */
const MAX_RESTARTS = 3;

/** Starts a sign-in; resolves with it once WhatsApp sent the first code. */
export async function startQrSignIn(deps: QrDeps): Promise<QrSession> {
  const signIn = new QrSignIn(deps);
  await signIn.begin();
  return {
    get code() {
      return signIn.code;
    },
    get expiresAt() {
      return new Date(signIn.expiresAt).toISOString();
    },
    status: () => signIn.view(),
    cancel: () => signIn.cancel(),
  };
}

class QrSignIn {
  code = '';
  expiresAt = 0;
  private status: QrStatus = 'pending';
  private error?: string;
  private cancelled = false;
  private restarts = 0;
  private socket?: { sock: WaSocket; detach(): void };
  private timer?: NodeJS.Timeout;
  private first?: { resolve(): void; reject(err: Error): void; timer: NodeJS.Timeout };
  private readonly creds: WaCreds;
  private readonly keys = new Map<string, unknown>();

  constructor(private readonly deps: QrDeps) {
    this.creds = deps.freshCreds();
  }

  begin(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const ms = this.deps.firstCodeMs ?? FIRST_CODE_MS;
      // Not unref'd: a request waits on it, and it is bounded.
      const timer = setTimeout(() => this.fail(`WhatsApp sent no QR code within ${ms / 1000} s`), ms);
      this.first = { resolve, reject, timer };
      void this.connect();
    });
  }

  view(): ReturnType<QrSession['status']> {
    // Read lazily too: a poll right at the expiry need not wait for the timer.
    if (this.status === 'pending' && this.code && Date.now() > this.expiresAt + QR_GRACE_MS) this.expire();
    const { status, error } = this;
    if (status !== 'pending') return { status, ...(error ? { error } : {}) };
    return { status, code: this.code, expiresAt: new Date(this.expiresAt).toISOString() };
  }

  cancel(): void {
    this.cancelled = true;
    this.settleFirst(new Error('the sign-in was cancelled'));
    this.closeSocket();
  }

  private over(): boolean {
    return this.cancelled || this.status === 'authenticated' || this.status === 'expired' || this.status === 'failed';
  }

  private async connect(): Promise<void> {
    let sock: WaSocket;
    try {
      sock = await this.deps.factory.create({ creds: this.creds, keys: memoryKeys(this.keys) }, this.deps.logger);
    } catch (err) {
      return this.fail(`the WhatsApp Web socket could not be made: ${(err as Error).message}`);
    }
    if (this.over()) return void sock.end();
    const onCreds = (update: Partial<WaCreds>) => void Object.assign(this.creds, update);
    const onUpdate = (update: WaConnectionUpdate) => this.onUpdate(sock, update);
    sock.ev.on('creds.update', onCreds);
    sock.ev.on('connection.update', onUpdate);
    this.socket = {
      sock,
      detach: () => {
        sock.ev.off('creds.update', onCreds);
        sock.ev.off('connection.update', onUpdate);
      },
    };
  }

  private onUpdate(sock: WaSocket, update: WaConnectionUpdate): void {
    if (this.over() || this.socket?.sock !== sock) return;
    if (update.qr && this.status === 'pending') this.show(update.qr);
    if (update.isNewLogin) {
      this.status = 'scanned';
      clearTimeout(this.timer);
    }
    if (update.connection === 'open') void this.authenticated();
    else if (update.connection === 'close') this.closed(update);
  }

  private show(code: string): void {
    this.code = code;
    this.expiresAt = Date.now() + this.deps.factory.qrTtlMs;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.status === 'pending' && this.expire(), this.deps.factory.qrTtlMs + QR_GRACE_MS);
    this.timer.unref();
    this.settleFirst();
  }

  private closed(update: WaConnectionUpdate): void {
    this.socket?.detach();
    this.socket = undefined;
    const action = closeAction(update);
    if (action.kind === 'logged_out') return this.fail(LOGGED_OUT);
    if (action.kind === 'stop') return this.fail(action.reason);
    // 408 before a scan: WhatsApp ran out of codes for this socket ("QR refs attempts ended").
    if (this.status === 'pending' && statusCodeOf(update) === 408) return this.expire();
    if (++this.restarts > MAX_RESTARTS) return this.fail(action.kind === 'retry' ? action.reason : 'WhatsApp asked for too many restarts');
    void this.connect();
  }

  private async authenticated(): Promise<void> {
    clearTimeout(this.timer);
    if (!this.creds.me?.id) return this.fail('WhatsApp opened the connection without an account');
    try {
      await this.deps.auth.replace(this.creds, this.keys);
      this.status = 'authenticated';
    } catch (err) {
      this.fail(`the sign-in could not be stored: ${(err as Error).message}`);
    }
    // The channel connects with the stored account; two sockets on one account would replace each other (440).
    this.closeSocket();
  }

  private expire(): void {
    this.status = 'expired';
    this.error = 'no phone scanned the code before it expired';
    this.settleFirst(new HttpError(502, 'WhatsApp ended the sign-in before sending a QR code'));
    this.closeSocket();
  }

  private fail(error: string): void {
    if (this.over()) return;
    this.status = 'failed';
    this.error = error;
    this.settleFirst(new HttpError(502, `the WhatsApp Web sign-in failed: ${error}`));
    this.closeSocket();
  }

  private settleFirst(err?: Error): void {
    const first = this.first;
    if (!first) return;
    this.first = undefined;
    clearTimeout(first.timer);
    if (err) first.reject(err);
    else first.resolve();
  }

  private closeSocket(): void {
    clearTimeout(this.timer);
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return;
    socket.detach();
    void Promise.resolve(socket.sock.end()).catch(() => undefined);
  }
}

/** A sign-in's Signal keys, in memory until the phone linked it (then stored with its credentials). */
function memoryKeys(keys: Map<string, unknown>): WaKeyStore {
  return {
    async get(type, ids) {
      return Object.fromEntries(ids.flatMap((id) => (keys.has(AuthStore.keyName(type, id)) ? [[id, keys.get(AuthStore.keyName(type, id))]] : [])));
    },
    async set(data) {
      for (const [type, byId] of Object.entries(data))
        for (const [id, value] of Object.entries(byId))
          if (value === null || value === undefined) keys.delete(AuthStore.keyName(type, id));
          else keys.set(AuthStore.keyName(type, id), value);
    },
  };
}
