/**
 * One realtime-API (DDP) connection to /websocket, a connection of the kit's reconnect loop. The `ws` package opens
 * its own socket (the net module's fetch cannot carry a WebSocket): the URL is the configured server_url's host only.
 * `connect`, then `login` with the personal access token as the resume token (a refusal is an auth error, as is a
 * token of another user), then `sub stream-room-messages __my_messages__`; the subscription's `ready` is the ready
 * signal. Work (the catch-up, each message) runs in one queue, in order; a failed commit ends the connection and the
 * next one's catch-up reads the message again. The server's `ping` is answered and counts as traffic.
 */
import WebSocket from 'ws';
import { channelError } from './errors.ts';
import type { ReconnectLink } from './types.ts';

const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const SUB_ID = 'my-messages';

type Frame = {
  msg?: string;
  id?: string;
  subs?: string[];
  collection?: string;
  fields?: { eventName?: string; args?: unknown[] };
  result?: { id?: string };
  error?: { error?: unknown; reason?: string; message?: string };
};

export interface DdpHandlers {
  onReady(): Promise<void>;
  onMessage(args: unknown[]): Promise<void>;
}

export class RocketChatDdp {
  private ws: WebSocket | undefined;
  private ready = false;
  private ids = 0;

  constructor(
    private readonly url: string,
    private readonly userId: string,
    private readonly token: string,
  ) {}

  /** A method call on the open, logged-in socket, its answer not awaited; false when there is none. */
  call(method: string, params: unknown[]): boolean {
    if (!this.ws || !this.ready || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify({ msg: 'method', method, id: `m${++this.ids}`, params }));
    return true;
  }

  connect(link: ReconnectLink, handlers: DdpHandlers): Promise<void> {
    // The loop gives a connection up without waiting for it (a stop while GET /me ran): it opens nothing then.
    if (link.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(this.url, { handshakeTimeout: 30_000, maxPayload: MAX_FRAME_BYTES, followRedirects: false });
      this.ws = ws;
      this.ready = false;
      let failure: unknown;
      let queue = Promise.resolve();
      const fail = (err: unknown) => {
        failure ??= err;
        ws.terminate();
      };
      const enqueue = (work: () => Promise<void>) => {
        queue = queue.then(() => (failure === undefined ? work() : undefined)).catch(fail);
      };
      const send = (frame: object) => ws.send(JSON.stringify(frame));
      const abort = () => ws.terminate();
      link.signal.addEventListener('abort', abort, { once: true });
      ws.on('open', () => send({ msg: 'connect', version: '1', support: ['1'] }));
      ws.on('message', (raw) => {
        link.traffic();
        let frame: Frame;
        try {
          frame = JSON.parse(String(raw)) as Frame;
        } catch {
          return fail(new Error('Rocket.Chat sent a frame that is not JSON'));
        }
        switch (frame.msg) {
          case 'ping':
            return send({ msg: 'pong', ...(frame.id ? { id: frame.id } : {}) });
          case 'connected':
            return send({ msg: 'method', method: 'login', id: 'login', params: [{ resume: this.token }] });
          case 'failed':
            return fail(new Error('Rocket.Chat refused the DDP protocol version'));
          case 'result':
            if (frame.id !== 'login') return;
            if (frame.error)
              return fail(channelError(`Rocket.Chat refused the access token (${frame.error.reason ?? frame.error.message ?? 'login failed'})`, 'auth'));
            if (frame.result?.id !== this.userId)
              return fail(channelError(`the access token belongs to another user than the configured user_id ${this.userId}`, 'auth'));
            return send({ msg: 'sub', id: SUB_ID, name: 'stream-room-messages', params: ['__my_messages__', { useCollection: false, args: [] }] });
          case 'ready':
            if (!frame.subs?.includes(SUB_ID)) return;
            this.ready = true;
            link.ready();
            return enqueue(() => handlers.onReady());
          case 'nosub':
            return fail(new Error(`Rocket.Chat refused the message stream (${frame.error?.reason ?? frame.error?.message ?? 'nosub'})`));
          case 'changed':
            if (frame.collection === 'stream-room-messages' && Array.isArray(frame.fields?.args)) enqueue(() => handlers.onMessage(frame.fields!.args!));
        }
      });
      ws.on('error', (err) => fail(err));
      ws.on('close', () => {
        link.signal.removeEventListener('abort', abort);
        if (this.ws === ws) this.ready = false;
        // Work already queued finishes (or fails) before the connection counts as ended.
        void queue.then(() => (failure === undefined ? resolve() : reject(failure)));
      });
    });
  }

  close(): void {
    this.ws?.terminate();
  }
}
