import http from 'node:http';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import type { SyncWaterfallHook } from 'tapable';
import { LONG_LIVED } from '@talon/module-sdk';
import type { Generation } from './generation.ts';

const OWN_ANSWER_HEADERS = { 'content-type': 'application/json; charset=utf-8', connection: 'close' };
type BaseHeaders = SyncWaterfallHook<[Record<string, string>]>;

/** An `{error}` answer outside any route (no generation, or no route yet): the base headers and a request id. */
export function answerError(
  to: http.ServerResponse | Socket,
  base: BaseHeaders,
  status: number,
  error: string,
  requestId: string = randomUUID(),
): void {
  const body = JSON.stringify({ error });
  const headers = {
    ...base.call({}),
    ...OWN_ANSWER_HEADERS,
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
  };
  if (to instanceof http.ServerResponse) return void to.writeHead(status, headers).end(body);
  // An upgrade, or a request Node could not parse, has no response object: the answer is written raw.
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  to.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${lines.join('')}\r\n${body}`);
}

/** The generation a response is counted in (in flight) until it closes or turns into a stream. */
const COUNTED_IN = Symbol('counted in');
type Counted = http.ServerResponse & { [COUNTED_IN]?: Generation };

function uncount(this: Counted): void {
  const g = this[COUNTED_IN];
  if (!g) return;
  g.inflight--;
  this[COUNTED_IN] = undefined;
}

/** The one listening server: it hands each request and upgrade to the live generation (docs/architecture.md). */
export class FrontServer {
  readonly server: http.Server;
  private live?: Generation;
  private closing = false;
  /** Retired generations kept open for the WebSockets they still carry. */
  private readonly lingering = new Set<Generation>();

  constructor(private readonly baseHeaders: BaseHeaders) {
    // No request timeout: SSE streams and long turns must not be cut by the server.
    this.server = http.createServer(
      { keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 0 },
      (req, res) => {
        const g = this.live;
        if (!g || this.closing) return answerError(res, this.baseHeaders, 503, this.unavailable());
        g.inflight++;
        (res as Counted)[COUNTED_IN] = g;
        // A drain never waits for a stream (SSE). One shared listener, no closure per request; `on`, not `once`
        // (`once` wraps the listener anew each time).
        res.on('close', uncount).on(LONG_LIVED, uncount);
        // HEAD is answered by the GET route: Node made the response knowing the method and leaves the body out.
        if (req.method === 'HEAD') req.method = 'GET';
        g.inner.emit('request', req, res);
      },
    );
    this.server.on('upgrade', (req, socket: Socket, head) => {
      const g = this.live;
      if (!g || this.closing) return answerError(socket, this.baseHeaders, 503, this.unavailable());
      // An upgraded socket outlives its request and stays with the generation that accepted it.
      g.upgraded.add(socket);
      socket.once('close', () => {
        g.upgraded.delete(socket);
        g.owners.delete(socket);
      });
      g.inner.emit('upgrade', req, socket, head);
    });
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
      if (err.code === 'HPE_HEADER_OVERFLOW')
        return answerError(socket, this.baseHeaders, 431, 'request headers too large');
      answerError(socket, this.baseHeaders, 400, 'malformed HTTP request');
    });
  }

  private readonly unavailable = (): string =>
    this.closing ? 'the service is shutting down' : 'the service is starting';

  /**
   * Makes next live at once. The previous one drains (bounded); WebSockets of `closeModules` close (1001) there and in
   * older ones.
   */
  swap(next: Generation, closeModules: ReadonlySet<string>): { drained: Promise<void> } {
    const previous = this.live;
    this.live = next;
    for (const g of this.lingering) closeWebSockets(g, closeModules);
    return { drained: previous ? this.retire(previous, closeModules) : Promise.resolve() };
  }

  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    this.server.listen(port, host);
    await once(this.server, 'listening'); // rejects on 'error' (the port is taken)
    const address = this.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  /** Stops accepting, lets in-flight requests finish (bounded), then closes every connection. */
  async close(drainMs: number): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve())); // also closes idle connections
    const g = this.live;
    if (g) await waitFor(() => g.inflight <= 0, drainMs);
    // Closing an app closes its WebSockets (1001 going away) before the server waits for its connections.
    for (const gen of [...this.lingering, ...(g ? [g] : [])]) {
      await gen.app.close().catch(() => undefined);
      for (const socket of gen.upgraded) socket.destroy();
    }
    this.lingering.clear();
    this.server.closeAllConnections();
    await closed;
    this.live = undefined;
  }

  private async retire(g: Generation, closeModules: ReadonlySet<string>): Promise<void> {
    await waitFor(() => g.inflight <= 0, 5_000);
    closeWebSockets(g, closeModules);
    if ([...g.upgraded].every((socket) => isReplaced(g, socket, closeModules)))
      return void g.app.close().catch(() => undefined);
    this.lingering.add(g);
    const closeWhenEmpty = () => {
      if (g.upgraded.size > 0 || !this.lingering.has(g)) return;
      this.lingering.delete(g);
      void g.app.close().catch(() => undefined);
    };
    for (const socket of g.upgraded) socket.once('close', () => setImmediate(closeWhenEmpty));
  }
}

/** A WebSocket goes with a reload of `modules` if one of them (or no known module) accepted it. */
function isReplaced(g: Generation, socket: Socket, modules: ReadonlySet<string>): boolean {
  const owner = g.owners.get(socket);
  return owner === undefined || modules.has(owner);
}

function closeWebSockets(g: Generation, modules: ReadonlySet<string>): void {
  // ws keeps each client's socket in the undocumented `_socket`.
  const clients = g.app.websocketServer?.clients as
    Set<{ _socket?: Socket; close(code: number, reason: string): void }> | undefined;
  for (const ws of clients ?? [])
    if (ws._socket && isReplaced(g, ws._socket, modules)) ws.close(1001, 'module reloaded');
}

async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}
