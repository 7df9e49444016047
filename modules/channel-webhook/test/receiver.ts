/**
 * A tiny webhook receiver on 127.0.0.1, the platform side of the webhook channel in its tests: it checks each
 * callback's signature with the secret it was given (401 when wrong, as a real receiver would), records the replies,
 * and can answer the next message with 429 Retry-After.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureProblem } from '../services/signature.ts';

export interface Reply {
  chat_id: string;
  thread_id?: string;
  text: string;
  /** A file sent out: its own message, the content as base64. */
  media?: { name: string; media_type: string; data?: string; url?: string };
  nonce: string;
  at: number;
}

export interface Receiver {
  url: string;
  replies: Reply[];
  pings: number;
  /** Calls answered 429 (the reply not recorded). */
  refused: number;
  rateLimitOnce(seconds: number): void;
  stop(): Promise<void>;
}

export async function startReceiver(secret: string): Promise<Receiver> {
  let limitNext: number | undefined;
  const state = { replies: [] as Reply[], pings: 0, refused: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const problem = signatureProblem(secret, req.headers['x-talon-timestamp'], req.headers['x-talon-signature'], body);
      if (problem) return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: problem }));
      const msg = JSON.parse(body) as Reply & { type: string };
      if (msg.type === 'ping') {
        state.pings++;
        return void res.writeHead(204).end();
      }
      if (limitNext !== undefined) {
        res.writeHead(429, { 'retry-after': String(limitNext) }).end();
        limitNext = undefined;
        state.refused++;
        return;
      }
      state.replies.push({ ...msg, at: Date.now() });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ message_id: `m${state.replies.length}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    get replies() {
      return state.replies;
    },
    get pings() {
      return state.pings;
    },
    get refused() {
      return state.refused;
    },
    rateLimitOnce: (seconds) => void (limitNext = seconds),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
