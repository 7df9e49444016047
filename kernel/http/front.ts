import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { SyncWaterfallHook } from 'tapable';
import { LONG_LIVED } from '@talon/module-sdk';
import type { Generation } from './generation.ts';

/**
 * The one listening server. It hands each request and upgrade to the live
 * generation; swapping generations is one assignment, and requests already
 * running finish on the generation that took them.
 */
export class FrontServer {
  readonly server: http.Server;
  private live?: Generation;
  private closing = false;
  /** Retired generations kept open for the WebSockets they still carry. */
  private readonly lingering = new Set<Generation>();

  /** `baseHeaders` gives the headers every answer carries (the security headers), also the ones given here. */
  constructor(private readonly baseHeaders: SyncWaterfallHook<[Record<string, string>]>) {
    this.server = http.createServer((req, res) => {
      const g = this.live;
      if (!g || this.closing) return void res.writeHead(503, this.ownHeaders(this.unavailable())).end(this.unavailable());
      g.inflight++;
      let counted = true;
      const done = () => {
        if (counted) g.inflight--;
        counted = false;
      };
      // `on`, not `once`: done runs once by itself, and once wraps each listener anew (every request passes here).
      res.on('close', done);
      // A stream (SSE) lives until its module ends it: a drain never waits for it, as for WebSockets.
      res.on(LONG_LIVED, done);
      // HEAD is answered by the GET route: the response was made knowing the method, so Node leaves its body out.
      // Fastify's HEAD twin of every GET route was a third of the router and of building each generation.
      if (req.method === 'HEAD') req.method = 'GET';
      g.inner.emit('request', req, res);
    });
    this.server.on('upgrade', (req, socket: Socket, head) => {
      const g = this.live;
      if (!g || this.closing) return this.answerRaw(socket, '503 Service Unavailable', this.unavailable());
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
      if (err.code === 'HPE_HEADER_OVERFLOW') return this.answerRaw(socket, '431 Request Header Fields Too Large', errorJson('request headers too large'));
      this.answerRaw(socket, '400 Bad Request', errorJson('malformed HTTP request'));
    });
    this.server.keepAliveTimeout = 65_000;
    this.server.headersTimeout = 66_000;
    this.server.requestTimeout = 0; // SSE and long turns must not be cut by the server
  }

  /** Headers of an answer the front server gives itself (no generation is involved). */
  private ownHeaders(body: string): Record<string, string> {
    return {
      ...this.baseHeaders.call({}),
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'x-request-id': randomUUID(),
      connection: 'close',
    };
  }

  private unavailable(): string {
    return errorJson(this.closing ? 'the service is shutting down' : 'the service is starting');
  }

  /** Answers on a socket no HTTP response object exists for (an upgrade, a request Node could not parse). */
  private answerRaw(socket: Socket, status: string, body: string): void {
    const headers = Object.entries(this.ownHeaders(body)).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.end(`HTTP/1.1 ${status}\r\n${headers.join('')}\r\n${body}`);
  }

  /**
   * Makes next live at once. The previous generation drains its HTTP requests
   * (bounded); `drained` settles then. WebSockets of the modules in
   * `closeModules` (the replaced ones) are closed with 1001; the others stay on
   * the old generation, which closes once the last of them has gone.
   */
  swap(next: Generation, closeModules: ReadonlySet<string>): { drained: Promise<void> } {
    const previous = this.live;
    this.live = next;
    // Older generations kept for their WebSockets lose the sockets of the replaced modules too.
    for (const g of this.lingering) closeOwnedBy(g, closeModules);
    return { drained: previous ? this.retire(previous, closeModules) : Promise.resolve() };
  }

  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('server has no TCP address');
    return { host: address.address, port: address.port };
  }

  /** Stops accepting, lets in-flight requests finish (bounded), then closes every connection. */
  async close(drainMs: number): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
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
    closeOwnedBy(g, closeModules);
    if (g.upgraded.size === 0 || [...g.upgraded].every((s) => !g.owners.has(s) || closeModules.has(g.owners.get(s)!))) {
      void g.app.close().catch(() => undefined);
      return;
    }
    this.lingering.add(g);
    const closeWhenEmpty = () => {
      if (g.upgraded.size > 0 || !this.lingering.has(g)) return;
      this.lingering.delete(g);
      void g.app.close().catch(() => undefined);
    };
    for (const socket of g.upgraded) socket.once('close', () => setImmediate(closeWhenEmpty));
  }
}

const errorJson = (error: string) => JSON.stringify({ error });

/** Closes (1001) the WebSockets of a generation that belong to one of the modules, or to no known module. */
function closeOwnedBy(g: Generation, modules: ReadonlySet<string>): void {
  for (const [socket, ws] of webSocketsOf(g)) {
    const owner = g.owners.get(socket);
    if (owner === undefined || modules.has(owner)) ws.close(1001, 'module reloaded');
  }
}

/** The WebSocket (ws) objects of a generation by their socket. */
function webSocketsOf(g: Generation): Map<Socket, { close(code: number, reason: string): void }> {
  const server = (g.app as unknown as { websocketServer?: { clients: Set<{ _socket?: Socket; close(code: number, reason: string): void }> } }).websocketServer;
  const out = new Map<Socket, { close(code: number, reason: string): void }>();
  for (const client of server?.clients ?? []) if (client._socket) out.set(client._socket, client);
  return out;
}

async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}
