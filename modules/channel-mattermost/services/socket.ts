/**
 * One WebSocket connection to /api/v4/websocket, a connection of the kit's reconnect loop. The `ws` package opens its
 * own socket (the net module's fetch cannot carry a WebSocket): the URL is the configured server_url's host only.
 * The token goes in the `authentication_challenge` action, never in the URL. `hello` is the ready signal; each event
 * carries the server's sequence number, and a gap (an event the server dropped for a slow client) ends the connection
 * so the next one's catch-up reads what was missed. Work (the catch-up, each post) runs in one queue, in order; a
 * failed commit ends the connection and the catch-up of the next one reads the post again.
 */
import WebSocket from 'ws';
import type { ReconnectLink } from './types.ts';
import { channelError } from './errors.ts';

/** A client ping this often; the server answers with a pong, which counts as traffic. */
const PING_MS = 20_000;
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export interface SocketEvent {
  event: string;
  data: Record<string, unknown>;
  broadcast?: Record<string, unknown>;
  seq: number;
}

export interface SocketHandlers {
  /** After `hello`: queued before any event of this connection. */
  onHello(): Promise<void>;
  onEvent(ev: SocketEvent): Promise<void>;
}

export class MattermostSocket {
  private ws: WebSocket | undefined;
  private authed = false;
  private seq = 1;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  /** Sends an action (user_typing) on the open, authenticated socket; false when there is none. */
  action(action: string, data: Record<string, unknown>): boolean {
    if (!this.ws || !this.authed || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify({ seq: ++this.seq, action, data }));
    return true;
  }

  connect(link: ReconnectLink, handlers: SocketHandlers): Promise<void> {
    // The loop gives a connection up without waiting for it (a stop while GET /users/me ran): it opens nothing then.
    if (link.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(this.url, { handshakeTimeout: 30_000, maxPayload: MAX_FRAME_BYTES, followRedirects: false });
      this.ws = ws;
      this.authed = false;
      this.seq = 1;
      let failure: unknown;
      let expected: number | undefined;
      let queue = Promise.resolve();
      const fail = (err: unknown) => {
        failure ??= err;
        ws.terminate();
      };
      const enqueue = (work: () => Promise<void>) => {
        queue = queue.then(() => (failure === undefined ? work() : undefined)).catch(fail);
      };
      const ping = setInterval(() => ws.readyState === WebSocket.OPEN && ws.ping(), PING_MS);
      const abort = () => ws.terminate();
      link.signal.addEventListener('abort', abort, { once: true });
      ws.on('open', () => ws.send(JSON.stringify({ seq: 1, action: 'authentication_challenge', data: { token: this.token } })));
      ws.on('pong', () => link.traffic());
      ws.on('message', (raw) => {
        link.traffic();
        let frame: Partial<SocketEvent> & { seq_reply?: number; status?: string; error?: { id?: string; message?: string } };
        try {
          frame = JSON.parse(String(raw)) as typeof frame;
        } catch {
          return fail(new Error('Mattermost sent a frame that is not JSON'));
        }
        if (frame.seq_reply === 1 && frame.status !== 'OK')
          return fail(channelError(`Mattermost refused the WebSocket authentication (${frame.error?.id ?? frame.status})`, 'auth'));
        if (typeof frame.event !== 'string' || typeof frame.seq !== 'number') return;
        if (frame.event === 'hello') {
          this.authed = true;
          expected = frame.seq + 1;
          link.ready();
          return enqueue(() => handlers.onHello());
        }
        if (expected !== undefined && frame.seq !== expected) return fail(new Error(`Mattermost event ${expected} was missed (got ${frame.seq})`));
        expected = frame.seq + 1;
        const ev = { event: frame.event, data: frame.data ?? {}, ...(frame.broadcast ? { broadcast: frame.broadcast } : {}), seq: frame.seq };
        enqueue(() => handlers.onEvent(ev));
      });
      ws.on('error', (err) => fail(err));
      ws.on('close', () => {
        clearInterval(ping);
        link.signal.removeEventListener('abort', abort);
        if (this.ws === ws) this.authed = false;
        // Work already queued finishes (or fails) before the connection counts as ended.
        void queue.then(() => (failure === undefined ? resolve() : reject(failure)));
      });
    });
  }

  close(): void {
    this.ws?.terminate();
  }
}
