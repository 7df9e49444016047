import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SseWriter {
  /** Sends one event; data is JSON-encoded unless it is a string. */
  send(event: string | undefined, data: unknown): boolean;
  /** Sends an SSE comment line (used for keep-alives). */
  comment(text: string): boolean;
  close(): void;
  readonly closed: boolean;
  /** Resolves when the client goes away or close() is called. */
  readonly done: Promise<void>;
  onClose(fn: () => void): void;
}

/**
 * Takes over the reply and turns it into a Server-Sent Events stream, with a
 * keep-alive comment every keepAliveMs. The caller owns the stream until it
 * calls close(); a client disconnect closes it too.
 */
/**
 * Emitted on a response that became a long-lived stream: the kernel stops counting it as a request in
 * flight, so a hot reload's drain does not wait for it (the module's stop ends it; clients reconnect).
 */
export const LONG_LIVED = 'talon:long-lived';

export function openSse(request: FastifyRequest, reply: FastifyReply, options: { keepAliveMs?: number } = {}): SseWriter {
  reply.hijack();
  const res = reply.raw;
  res.emit(LONG_LIVED);
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  };
  // Headers set by onRequest hooks (request id, security, CORS) must survive the hijack.
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) res.setHeader(name, value as string);
  }
  res.writeHead(200, headers);
  res.flushHeaders?.();
  let closed = false;
  const listeners: Array<() => void> = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    for (const fn of listeners.splice(0)) {
      try {
        fn();
      } catch {
        // a listener's failure must not keep the stream open
      }
    }
    resolveDone();
  };
  const timer = setInterval(() => writer.comment('keep-alive'), options.keepAliveMs ?? 15_000);
  timer.unref();
  request.raw.on('close', finish);
  res.on('close', finish);
  const write = (chunk: string) => {
    if (closed || res.writableEnded) return false;
    return res.write(chunk);
  };
  const writer: SseWriter = {
    send(event, data) {
      const payload = typeof data === 'string' ? data : JSON.stringify(data);
      const lines = payload
        .split('\n')
        .map((l) => `data: ${l}`)
        .join('\n');
      return write(`${event ? `event: ${event}\n` : ''}${lines}\n\n`);
    },
    comment(text) {
      return write(`: ${text}\n\n`);
    },
    close() {
      if (!res.writableEnded) res.end();
      finish();
    },
    get closed() {
      return closed;
    },
    done,
    onClose(fn) {
      if (closed) fn();
      else listeners.push(fn);
    },
  };
  return writer;
}
