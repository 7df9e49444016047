/**
 * One peer connection: the handshake (handshake.ts) on the plain framing, then sealed request/response and
 * notification messages. A connection that fails admission is closed with an error frame and logged.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { asHello, makeHello, proofProblem, prove, sessionKeys, transcript, type Ephemeral, type Hello, type Proof, type Role } from './handshake.ts';
import type { Identity } from './identity.ts';
import type { Pins } from './pins.ts';
import { FrameReader, MAX_FRAME, MAX_HANDSHAKE_FRAME, Sealer, writeFrame } from './wire.ts';

const HANDSHAKE_MS = 10_000;
const NONCE_TTL_MS = 5 * 60_000;

/** Nonces seen in handshakes, refused for five minutes. */
export class NonceLedger {
  private readonly seen = new Map<string, number>();

  use(nonce: string): boolean {
    const now = Date.now();
    for (const [n, until] of this.seen) if (until <= now) this.seen.delete(n);
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, now + NONCE_TTL_MS);
    return true;
  }
}

export interface ConnectionDeps {
  identity: Identity;
  secret: () => string;
  pins: Pins;
  nonces: NonceLedger;
  log: Logger;
  /** A request from the peer; throw to answer an error. */
  onRequest(conn: Connection, method: string, params: Record<string, unknown>): Promise<unknown>;
  onNotification(conn: Connection, method: string, params: Record<string, unknown>): void;
  /** The peer is admitted; false refuses it (too many peers, a duplicate). */
  onReady(conn: Connection): boolean;
  onClose(conn: Connection): void;
  onTraffic(direction: 'in' | 'out'): void;
}

interface Message {
  id?: string;
  type: 'request' | 'response' | 'notification';
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: string; message: string };
}

export class PeerError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class Connection {
  peer?: Hello;
  readonly address: string;
  lastSeen = Date.now();
  private readonly reader = new FrameReader(MAX_HANDSHAKE_FRAME);
  private readonly mine: Ephemeral;
  private send?: Sealer;
  private receive?: Sealer;
  private readonly pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private closed = false;
  private readonly handshakeTimer: NodeJS.Timeout;

  constructor(
    private readonly socket: Socket,
    readonly role: Role,
    private readonly deps: ConnectionDeps,
    /** The address dialled, for an initiator: its socket has no remote address until it connects. */
    dialled?: string,
  ) {
    this.address = dialled ?? `${socket.remoteAddress}:${socket.remotePort}`;
    this.mine = makeHello(deps.identity);
    this.handshakeTimer = setTimeout(() => this.refuse('handshake timed out'), HANDSHAKE_MS);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => this.onSocketClose());
    socket.on('error', (err) => deps.log.debug({ err, address: this.address }, 'peer socket error'));
    if (role === 'initiator') this.plain(this.mine.hello);
  }

  get ready(): boolean {
    return this.send !== undefined && !this.closed;
  }

  request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    if (!this.ready) return Promise.reject(new PeerError('not_connected', 'the peer is not connected'));
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new PeerError('timeout', `the peer did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.sealed({ id, type: 'request', method, params });
    });
  }

  notify(method: string, params: Record<string, unknown>): void {
    if (this.ready) this.sealed({ type: 'notification', method, params });
  }

  close(): void {
    if (!this.closed) this.socket.end();
    this.socket.destroySoon?.();
  }

  private plain(value: unknown): void {
    writeFrame(this.socket, Buffer.from(JSON.stringify(value)));
  }

  private sealed(message: Message): void {
    if (this.closed) return;
    writeFrame(this.socket, this.send!.seal(message));
    this.deps.onTraffic('out');
  }

  private refuse(reason: string): void {
    if (this.closed) return;
    this.deps.log.warn({ address: this.address, node: this.peer?.node_id, reason }, 'peer connection refused');
    if (!this.send) this.plain({ type: 'error', error: reason });
    this.socket.destroySoon?.();
    this.socket.end();
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      return this.refuse((err as Error).message);
    }
    for (const frame of frames) {
      if (this.closed) return;
      if (this.receive) this.onSealed(frame);
      else this.onHandshake(frame);
    }
  }

  private onHandshake(frame: Buffer): void {
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(frame.toString('utf8')) as Record<string, unknown>;
    } catch {
      return this.refuse('malformed handshake frame');
    }
    if (value.type === 'error') return this.refuse(`the peer refused us: ${String(value.error)}`);
    if (this.role === 'responder' && !this.peer) return this.onInitiatorHello(value);
    if (this.role === 'initiator') return this.onResponderHello(value);
    return this.onInitiatorAuth(value);
  }

  private onInitiatorHello(value: unknown): void {
    const hello = asHello(value);
    if (!hello) return this.refuse('not a hello of this protocol');
    this.peer = hello;
    const t = transcript(hello, this.mine.hello);
    this.plain({ ...this.mine.hello, proof: prove(this.deps.secret(), this.deps.identity, 'responder', t) });
  }

  private onResponderHello(value: Record<string, unknown>): void {
    const hello = asHello(value);
    if (!hello) return this.refuse('not a hello of this protocol');
    this.peer = hello;
    const t = transcript(this.mine.hello, hello);
    if (!this.admit(hello, 'responder', t, value.proof as Proof | undefined)) return;
    this.plain({ type: 'auth', proof: prove(this.deps.secret(), this.deps.identity, 'initiator', t) });
    this.established(t);
  }

  private onInitiatorAuth(value: Record<string, unknown>): void {
    const t = transcript(this.peer!, this.mine.hello);
    if (value.type !== 'auth' || !this.admit(this.peer!, 'initiator', t, value.proof as Proof | undefined)) return;
    this.established(t);
  }

  /**
   * The proof, then the nonce, then the pinned identity. Nonces and pins are recorded only for peers that proved the
   * secret, so a stranger's flood of hellos fills neither the ledger nor the pin table.
   */
  private admit(peer: Hello, role: Role, t: Buffer, proof: Proof | undefined): boolean {
    const problem = proofProblem(this.deps.secret(), peer, role, t, proof);
    if (problem) {
      this.refuse(problem);
      return false;
    }
    if (!this.deps.nonces.use(peer.nonce)) {
      this.refuse('handshake nonce was used before');
      return false;
    }
    const pin = this.deps.pins.check(peer.node_id, peer.public_key, this.address);
    if (!pin.ok) {
      this.refuse(`identity changed: ${pin.reason}`);
      return false;
    }
    return true;
  }

  private established(t: Buffer): void {
    const [toResponder, toInitiator] = sessionKeys(this.mine.privateKey, this.peer!.ephemeral, t);
    this.send = new Sealer(this.role === 'initiator' ? toResponder : toInitiator);
    this.receive = new Sealer(this.role === 'initiator' ? toInitiator : toResponder);
    this.reader.setMax(MAX_FRAME);
    clearTimeout(this.handshakeTimer);
    if (!this.deps.onReady(this)) this.close();
  }

  private onSealed(frame: Buffer): void {
    let message: Message;
    try {
      message = this.receive!.open(frame) as Message;
    } catch {
      return this.refuse('a frame failed authentication');
    }
    this.lastSeen = Date.now();
    this.deps.onTraffic('in');
    if (message.type === 'response' && message.id) return this.onResponse(message);
    if (message.type === 'notification' && message.method) return this.deps.onNotification(this, message.method, message.params ?? {});
    if (message.type === 'request' && message.id && message.method) void this.answer(message.id, message.method, message.params ?? {});
  }

  private onResponse(message: Message): void {
    const waiting = this.pending.get(message.id!);
    if (!waiting) return;
    this.pending.delete(message.id!);
    clearTimeout(waiting.timer);
    if (message.error) waiting.reject(new PeerError(message.error.code, message.error.message));
    else waiting.resolve(message.result);
  }

  private async answer(id: string, method: string, params: Record<string, unknown>): Promise<void> {
    try {
      this.sealed({ id, type: 'response', result: await this.deps.onRequest(this, method, params) });
    } catch (err) {
      const code = err instanceof PeerError ? err.code : 'error';
      this.sealed({ id, type: 'response', error: { code, message: (err as Error).message } });
    }
  }

  private onSocketClose(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.handshakeTimer);
    for (const [, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.reject(new PeerError('disconnected', 'the peer connection closed'));
    }
    this.pending.clear();
    this.deps.onClose(this);
  }
}
