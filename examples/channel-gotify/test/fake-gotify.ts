/**
 * A fake Gotify server (gotify.net/api-docs) on 127.0.0.1, speaking the real wire to the adapter: the client
 * WebSocket `/stream` (every new message pushed as JSON), `POST /message` (application token; JSON or form body),
 * `GET /message` (client token; newest first, `since` pages back to smaller ids), `GET /application` (client token).
 * Tokens are read from X-Gotify-Key, the `token` query parameter or `Authorization: Bearer`, as Gotify does; a wrong
 * one is a 401 with Gotify's error body. Not faithful: one user, no users/clients API, no ping frames (tests are
 * shorter than Gotify's 45 s ping period), and `rateLimitNext` (Gotify has no 429: a proxy in front of it may).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeMessage {
  id: number;
  appid: number;
  message: string;
  title: string;
  priority: number;
  date: string;
  extras?: Record<string, unknown>;
}

export interface FakeApp {
  id: number;
  token: string;
  name: string;
}

export interface GotifyFake {
  url: string;
  clientToken: string;
  /** The application the adapter posts as. */
  bot: FakeApp;
  /** Every request, in order: `GET /stream`, `POST /message`, … */
  calls: string[];
  /** An application posting a message (a script on the user's server); pushed to every open stream. */
  push(appId: number, message: string, title?: string): FakeMessage;
  /** Messages the bot's application posted, oldest first. */
  posted(): FakeMessage[];
  /** Closes every stream socket without a close frame (a network drop). */
  dropStreams(): void;
  /** The next POST /message answers 429 with Retry-After. */
  rateLimitNext(seconds: number): void;
  /** Stream sockets open (a dropped one counts no more). */
  openStreams(): number;
  stop(): Promise<void>;
}

const unauthorized = {
  error: 'Unauthorized',
  errorCode: 401,
  errorDescription: 'you need to provide a valid access token or user credentials to access this api',
};

function tokenOf(req: http.IncomingMessage, url: URL): string | undefined {
  const header = req.headers['x-gotify-key'];
  if (typeof header === 'string') return header;
  const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
  return bearer?.[1] ?? url.searchParams.get('token') ?? undefined;
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  if ((req.headers['content-type'] ?? '').includes('application/json')) return JSON.parse(raw || '{}') as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(raw));
}

export async function startGotifyFake(): Promise<GotifyFake> {
  const clientToken = 'CfakeClientTok';
  const bot: FakeApp = { id: 1, token: 'AfakeBotToken1', name: 'Talon' };
  const apps = new Map<number, FakeApp>([[bot.id, bot]]);
  const messages: FakeMessage[] = [];
  const calls: string[] = [];
  let nextId = 1;
  let rateLimit: number | undefined;
  const wss = new WebSocketServer({ noServer: true });

  const appFor = (id: number) => {
    let app = apps.get(id);
    if (!app) apps.set(id, (app = { id, token: `Afake${id}`, name: `app ${id}` }));
    return app;
  };
  const store = (appid: number, fields: { message: string; title?: string; priority?: number; extras?: Record<string, unknown> }) => {
    const m: FakeMessage = {
      id: nextId++,
      appid,
      message: fields.message,
      title: fields.title ?? apps.get(appid)?.name ?? '',
      priority: fields.priority ?? 0,
      date: new Date().toISOString(),
      ...(fields.extras ? { extras: fields.extras } : {}),
    };
    messages.push(m);
    for (const ws of wss.clients) if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
    return m;
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    calls.push(`${req.method} ${url.pathname}`);
    const token = tokenOf(req, url);
    void (async () => {
      if (req.method === 'POST' && url.pathname === '/message') {
        const app = [...apps.values()].find((a) => a.token === token);
        if (!app) return json(res, 401, unauthorized);
        if (rateLimit !== undefined) {
          const seconds = rateLimit;
          rateLimit = undefined;
          return json(res, 429, { error: 'Too Many Requests', errorCode: 429, errorDescription: 'slow down' }, { 'retry-after': String(seconds) });
        }
        const body = await readBody(req);
        if (typeof body.message !== 'string' || !body.message)
          return json(res, 400, { error: 'Bad Request', errorCode: 400, errorDescription: "Field 'message' is required" });
        const extras = typeof body.extras === 'object' && body.extras ? (body.extras as Record<string, unknown>) : undefined;
        const priority = body.priority === undefined ? undefined : Number(body.priority);
        return json(res, 200, store(app.id, { message: body.message, title: typeof body.title === 'string' ? body.title : undefined, priority, extras }));
      }
      if (token !== clientToken) return json(res, 401, unauthorized);
      if (req.method === 'GET' && url.pathname === '/application')
        return json(
          res,
          200,
          [...apps.values()].map((a) => ({ ...a, description: '', internal: false, image: 'static/defaultapp.png', defaultPriority: 0 })),
        );
      if (req.method === 'GET' && url.pathname === '/message') {
        const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 100), 1), 200);
        const since = Number(url.searchParams.get('since') ?? 0);
        const older = [...messages].reverse().filter((m) => !since || m.id < since);
        const page = older.slice(0, limit);
        const next = older.length > limit ? page.at(-1)!.id : 0;
        return json(res, 200, {
          messages: page,
          paging: { size: page.length, since: next, limit, ...(next ? { next: `${url.pathname}?limit=${limit}&since=${next}` } : {}) },
        });
      }
      json(res, 404, { error: 'Not Found', errorCode: 404, errorDescription: 'page not found' });
    })().catch((err: unknown) => json(res, 400, { error: 'Bad Request', errorCode: 400, errorDescription: (err as Error).message }));
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    calls.push(`GET ${url.pathname}`);
    if (url.pathname !== '/stream' || tokenOf(req, url) !== clientToken) {
      const body = JSON.stringify(unauthorized);
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => wss.emit('connection', ws, req));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    clientToken,
    bot,
    calls,
    push: (appId, message, title) => store(appFor(appId).id, { message, ...(title !== undefined ? { title } : {}) }),
    posted: () => messages.filter((m) => m.appid === bot.id),
    dropStreams() {
      for (const ws of wss.clients) ws.terminate();
    },
    rateLimitNext(seconds) {
      rateLimit = seconds;
    },
    openStreams: () => [...wss.clients].filter((ws) => ws.readyState === ws.OPEN).length,
    async stop() {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
