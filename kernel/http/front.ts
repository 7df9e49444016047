import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
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
  private readonly upgraded = new Set<Socket>();

  constructor() {
    this.server = http.createServer((req, res) => {
      const g = this.live;
      if (!g || this.closing) {
        res.statusCode = 503;
        res.setHeader('content-type', 'application/json');
        res.setHeader('x-request-id', randomUUID());
        res.setHeader('connection', 'close');
        res.end(JSON.stringify({ error: this.closing ? 'the service is shutting down' : 'the service is starting' }));
        return;
      }
      g.inflight++;
      res.once('close', () => g.inflight--);
      g.inner.emit('request', req, res);
    });
    this.server.on('upgrade', (req, socket: Socket, head) => {
      const g = this.live;
      if (!g || this.closing) {
        socket.end('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\r\n');
        return;
      }
      // An upgraded socket outlives its request: it is closed with its generation (WebSocket close 1001).
      this.upgraded.add(socket);
      socket.once('close', () => this.upgraded.delete(socket));
      g.inner.emit('upgrade', req, socket, head);
    });
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
      const body = JSON.stringify({ error: err.code === 'HPE_HEADER_OVERFLOW' ? 'request headers too large' : 'malformed HTTP request' });
      const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomUUID()}\r\nconnection: close\r\n\r\n${body}`);
    });
    this.server.keepAliveTimeout = 65_000;
    this.server.headersTimeout = 66_000;
    this.server.requestTimeout = 0; // SSE and long turns must not be cut by the server
  }

  get generation(): Generation | undefined {
    return this.live;
  }

  /**
   * Makes next live at once. The returned promise settles when the previous
   * generation has drained (bounded) and closed.
   */
  swap(next: Generation, drainMs = 5_000): Promise<void> {
    const previous = this.live;
    this.live = next;
    return previous ? this.retire(previous, drainMs) : Promise.resolve();
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
    if (g) {
      await waitFor(() => g.inflight <= 0, drainMs);
      // Closing the app closes its WebSockets (1001 going away) before the server waits for its connections.
      await g.app.close().catch(() => undefined);
    }
    for (const socket of this.upgraded) socket.destroy();
    this.server.closeAllConnections();
    await closed;
    this.live = undefined;
  }

  private async retire(g: Generation, drainMs: number): Promise<void> {
    await waitFor(() => g.inflight <= 0, drainMs);
    await g.app.close().catch(() => undefined);
  }
}

async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}
