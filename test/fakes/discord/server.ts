/**
 * A fake Discord API v10 on 127.0.0.1: the REST routes an adapter uses under `/api/v10` (discord.js's RESTOptions.api
 * is `<root>/api`) and the Gateway as a WebSocket at the URL GET /gateway/bot hands out. Gateway JSON encoding, no
 * compression, one shard. Sessions keep their dispatches so RESUME replays what a dropped connection missed.
 * See test/fakes/README.md for what is faithful and what is not.
 */
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { listen, readParams, sendJson, type FakeFile, type RecordedCall } from '../http.ts';

/** Gateway intents the fake honours (discord.com/developers/docs/events/gateway#gateway-intents). */
export const Intents = { GUILD_MESSAGES: 1 << 9, DIRECT_MESSAGES: 1 << 12, MESSAGE_CONTENT: 1 << 15 } as const;

export interface DiscordUser {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  bot?: boolean;
}
export interface InboundDiscordMessage {
  channel_id: string;
  content: string;
  /** Absent for a direct message. */
  guild_id?: string;
  author?: DiscordUser;
  /** Users mentioned (the bot, for mention gating); `<@id>` in content is how clients show it. */
  mentions?: DiscordUser[];
  /** The message this one replies to. */
  message_reference?: { message_id: string; channel_id?: string };
  attachments?: Array<{ id: string; filename: string; size: number; url: string; content_type?: string }>;
  /** Files the user attached: served by the fake at their attachment URLs, as Discord's CDN serves them. */
  files?: FakeFile[];
}

/** A file the bot uploaded with a message (multipart `files[n]`). */
export interface DiscordUpload {
  channel_id: string;
  message_id: string;
  file: FakeFile;
}
interface Dispatch {
  s: number;
  t: string;
  d: unknown;
}
interface Session {
  id: string;
  intents: number;
  seq: number;
  events: Dispatch[];
  socket?: WebSocket;
}

export interface DiscordFakeOptions {
  token?: string;
  /** HELLO's heartbeat_interval in ms (Discord sends ~41 s; tests want it short). */
  heartbeatInterval?: number;
}

export interface DiscordFake {
  /** For @discordjs/rest's `api` option (the REST root without the version). */
  api: string;
  /** The Gateway's WebSocket URL (what GET /gateway/bot answers). */
  gatewayUrl: string;
  token: string;
  bot: DiscordUser;
  /** REST calls (`POST /channels/1/messages`) and Gateway frames received (`gateway op 2`), in order. */
  calls: RecordedCall[];
  /** Messages the bot created through REST, as returned. */
  sent: Array<Record<string, unknown>>;
  /** Files the bot uploaded, in order (each also an attachment of its message in `sent`, served at its URL). */
  uploads: DiscordUpload[];
  /** Dispatches MESSAGE_CREATE to every identified session (held for RESUME when its socket is down). */
  injectMessage(message: InboundDiscordMessage): Record<string, unknown>;
  /** Dispatches any event to every session. */
  dispatch(t: string, d: unknown): void;
  /** Closes every Gateway socket (abnormally: `terminate`, as a network drop; or with a close code). Sessions stay. */
  dropConnections(code?: number): void;
  /** Sends INVALID_SESSION (op 9) with d = resumable to every connected client; a non-resumable one forgets its session. */
  invalidateSessions(resumable: boolean): void;
  /** Sends RECONNECT (op 7). */
  requestReconnect(): void;
  /**
   * The next REST call matching `route` (e.g. 'POST /channels/1/messages'; a `*` segment matches any one segment, so
   * `POST /channels/<*>/messages` written without the brackets matches a send to any channel) answers 429 with
   * Discord's headers.
   */
  rateLimitNext(route: string, retryAfterSeconds: number, global?: boolean): void;
  /** Open Gateway sockets now (to check a client does not leak connections). */
  openSockets(): number;
  /** Gateway connection attempts so far (WebSocket upgrade requests, answered or not). */
  connections(): number;
  /** While held, a Gateway upgrade request waits unanswered (the client's socket stays in its handshake). */
  holdHandshakes(hold: boolean): void;
  stop(): Promise<void>;
}

/** `pattern` with `*` standing for one path segment. */
const routeMatches = (pattern: string, route: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+')}$`,
  ).test(route);

// Snowflakes: increasing numeric strings, which is all a client may assume of them.
let snowflake = 1_100_000_000_000_000_000n;
const nextId = () => String(++snowflake);

export async function startDiscordFake(options: DiscordFakeOptions = {}): Promise<DiscordFake> {
  const token = options.token ?? 'discord-test-token';
  const heartbeatInterval = options.heartbeatInterval ?? 1_000;
  const bot: DiscordUser = { id: nextId(), username: 'talon', discriminator: '0', global_name: 'Talon', bot: true };
  const human: DiscordUser = { id: nextId(), username: 'alice', discriminator: '0', global_name: 'Alice' };
  const calls: RecordedCall[] = [];
  const sent: Array<Record<string, unknown>> = [];
  const uploads: DiscordUpload[] = [];
  /** CDN path (`/attachments/<channel>/<id>/<name>`) → the file, served without the bot token as Discord's CDN does. */
  const served = new Map<string, FakeFile>();
  const attach = (channelId: string, file: FakeFile) => {
    const id = nextId();
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(file.name)}`;
    served.set(path, file);
    return { id, filename: file.name, size: file.content.length, content_type: file.type, url: `${origin}${path}`, proxy_url: `${origin}${path}` };
  };
  const sessions = new Map<string, Session>();
  const limits = new Map<string, { retryAfter: number; global: boolean }>();
  /** nonce → the message it created, for enforce_nonce (Discord keeps them a few minutes). */
  const nonces = new Map<string, Record<string, unknown>>();

  const restError = (res: http.ServerResponse, status: number, code: number, message: string, extra: object = {}) =>
    sendJson(res, status, { message, code, ...extra });

  const routes: Array<[string, RegExp, (m: RegExpExecArray, p: Record<string, unknown>, res: http.ServerResponse) => void]> = [
    [
      'GET',
      /^\/gateway\/bot$/,
      (_m, _p, res) =>
        sendJson(res, 200, { url: gatewayUrl, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 } }),
    ],
    ['GET', /^\/gateway$/, (_m, _p, res) => sendJson(res, 200, { url: gatewayUrl })],
    ['GET', /^\/users\/@me$/, (_m, _p, res) => sendJson(res, 200, { ...bot, avatar: null, verified: true, flags: 0 })],
    [
      'POST',
      /^\/channels\/(\d+)\/messages$/,
      (m, p, res) => {
        // A multipart body carries its JSON in payload_json and each file as a part named files[n] (docs: uploading files).
        let payload = p;
        try {
          if (typeof p.payload_json === 'string') payload = { ...p, ...(JSON.parse(p.payload_json) as Record<string, unknown>) };
        } catch {
          return restError(res, 400, 50109, 'The request body contains invalid JSON.');
        }
        const content = typeof payload.content === 'string' ? payload.content : '';
        const files = Object.entries(payload).filter((e): e is [string, FakeFile] => /^files\[\d+\]$/.test(e[0]) && typeof e[1] === 'object');
        if (content.length > 2000) {
          return restError(res, 400, 50035, 'Invalid Form Body', {
            errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } },
          });
        }
        if (!content && !files.length && !payload.embeds) return restError(res, 400, 50006, 'Cannot send an empty message');
        const nonce = payload.nonce === undefined ? undefined : String(payload.nonce);
        const key = nonce && `${m[1]}:${nonce}`;
        // enforce_nonce: the same nonce again returns the message it created, not a second one.
        if (key && payload.enforce_nonce === true && nonces.has(key)) return sendJson(res, 200, nonces.get(key));
        const message: Record<string, unknown> = {
          id: nextId(),
          type: payload.message_reference ? 19 : 0,
          channel_id: m[1],
          author: bot,
          content,
          timestamp: new Date().toISOString(),
          edited_timestamp: null,
          tts: false,
          mention_everyone: false,
          mentions: [],
          mention_roles: [],
          attachments: files.map(([, file]) => attach(m[1]!, file)),
          embeds: payload.embeds ?? [],
          pinned: false,
          ...(nonce ? { nonce } : {}),
          ...(payload.message_reference ? { message_reference: payload.message_reference } : {}),
        };
        if (key) nonces.set(key, message);
        sent.push(message);
        for (const [, file] of files) uploads.push({ channel_id: m[1]!, message_id: String(message.id), file });
        sendJson(res, 200, message);
      },
    ],
    [
      'POST',
      /^\/channels\/(\d+)\/typing$/,
      (_m, _p, res) => {
        res.writeHead(204);
        res.end();
      },
    ],
  ];

  const http_ = await listen(async (req, res, url) => {
    // Routes come percent-encoded from @discordjs/rest (`/users/%40me`); Discord matches the decoded path.
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
    const params = await readParams(req, url);
    if (req.method === 'GET' && url.pathname.startsWith('/attachments/')) {
      calls.push({ method: `GET ${url.pathname}`, params, at: Date.now() });
      const file = served.get(url.pathname);
      if (!file) return restError(res, 404, 0, '404: Not Found');
      res.writeHead(200, { 'content-type': file.type, 'content-length': file.content.length });
      return void res.end(file.content);
    }
    const route = `${req.method} ${path}`;
    calls.push({ method: route, params, at: Date.now() });
    if (!url.pathname.startsWith('/api/v10/')) return restError(res, 404, 0, '404: Not Found');
    if (req.headers.authorization !== `Bot ${token}`) return restError(res, 401, 0, '401: Unauthorized');
    const limitKey = [...limits.keys()].find((k) => routeMatches(k, route));
    const limit = limitKey === undefined ? undefined : limits.get(limitKey);
    if (limitKey !== undefined && limit) {
      limits.delete(limitKey);
      // The headers discord.js's REST reads (docs: topics/rate-limits), in seconds.
      const headers: Record<string, string> = {
        'retry-after': String(Math.ceil(limit.retryAfter)),
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(Date.now() / 1000 + limit.retryAfter),
        'x-ratelimit-reset-after': String(limit.retryAfter),
        'x-ratelimit-bucket': 'fake-bucket',
        'x-ratelimit-scope': limit.global ? 'global' : 'user',
        ...(limit.global ? { 'x-ratelimit-global': 'true' } : {}),
      };
      return sendJson(res, 429, { message: 'You are being rate limited.', retry_after: limit.retryAfter, global: limit.global }, headers);
    }
    for (const [method, re, handle] of routes) {
      const m = re.exec(path);
      if (m && method === req.method) return handle(m, params, res);
    }
    restError(res, 404, 0, '404: Not Found');
  });
  const origin = `http://127.0.0.1:${http_.port}`;
  const restRoot = `${origin}/api`;
  const wss = new WebSocketServer({ noServer: true });
  let attempts = 0;
  let held: Array<() => void> | undefined;
  const pending = new Set<Duplex>();
  http_.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    attempts++;
    pending.add(socket);
    socket.once('close', () => pending.delete(socket));
    const answer = () => {
      pending.delete(socket);
      if (socket.destroyed) return;
      if (new URL(req.url ?? '/', 'http://fake').pathname !== '/gateway') return void socket.destroy();
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    };
    if (held) held.push(answer);
    else answer();
  });
  const gatewayUrl = `ws://127.0.0.1:${http_.port}/gateway`;
  const send = (ws: WebSocket, payload: { op: number; d: unknown; s?: number | null; t?: string | null }) =>
    ws.send(JSON.stringify({ s: null, t: null, ...payload }));
  const deliver = (session: Session, d: Dispatch) => {
    if (session.socket?.readyState === session.socket?.OPEN) session.socket?.send(JSON.stringify({ op: 0, ...d }));
  };
  const record = (session: Session, t: string, d: unknown) => {
    const event = { s: ++session.seq, t, d };
    session.events.push(event);
    deliver(session, event);
  };

  wss.on('connection', (ws) => {
    let session: Session | undefined;
    send(ws, { op: 10, d: { heartbeat_interval: heartbeatInterval } });
    ws.on('message', (raw) => {
      let frame: { op?: unknown; d?: Record<string, unknown> | null };
      try {
        frame = JSON.parse(String(raw)) as { op?: unknown; d?: Record<string, unknown> | null };
      } catch {
        return ws.close(4002, 'Error while decoding payload.');
      }
      calls.push({ method: `gateway op ${String(frame.op)}`, params: { d: frame.d }, at: Date.now() });
      switch (frame.op) {
        case 1:
          return send(ws, { op: 11, d: null });
        case 2: {
          if (session) return ws.close(4005, 'Already authenticated.');
          if (frame.d?.token !== token && frame.d?.token !== `Bot ${token}`) return ws.close(4004, 'Authentication failed.');
          session = { id: randomUUID().replaceAll('-', ''), intents: Number(frame.d?.intents ?? 0), seq: 0, events: [], socket: ws };
          sessions.set(session.id, session);
          return record(session, 'READY', {
            v: 10,
            user: bot,
            guilds: [],
            session_id: session.id,
            resume_gateway_url: gatewayUrl,
            shard: [0, 1],
            application: { id: bot.id, flags: 0 },
          });
        }
        case 6: {
          const resumed = sessions.get(String(frame.d?.session_id));
          if (frame.d?.token !== token && frame.d?.token !== `Bot ${token}`) return ws.close(4004, 'Authentication failed.');
          if (!resumed) return send(ws, { op: 9, d: false });
          // The old socket, if the client still had it, is replaced; the missed dispatches follow in order.
          if (resumed.socket && resumed.socket !== ws) resumed.socket.terminate();
          resumed.socket = ws;
          session = resumed;
          const since = Number(frame.d?.seq ?? 0);
          for (const e of resumed.events) if (e.s > since) deliver(resumed, e);
          return record(resumed, 'RESUMED', null);
        }
        default:
          if (!session) return ws.close(4003, 'Not authenticated.');
          return ws.close(4001, 'Unknown opcode.');
      }
    });
    ws.on('close', () => {
      if (session?.socket === ws) session.socket = undefined;
    });
  });

  const messageFor = (session: Session, message: Record<string, unknown>) => {
    // Without MESSAGE_CONTENT a bot sees the content of DMs and of messages that mention it, and empty otherwise.
    const mentioned = (message.mentions as DiscordUser[]).some((u) => u.id === bot.id);
    const visible = session.intents & Intents.MESSAGE_CONTENT || !message.guild_id || mentioned;
    return visible ? message : { ...message, content: '', attachments: [], embeds: [] };
  };
  const wants = (session: Session, message: Record<string, unknown>) => session.intents & (message.guild_id ? Intents.GUILD_MESSAGES : Intents.DIRECT_MESSAGES);

  return {
    api: restRoot,
    gatewayUrl,
    token,
    bot,
    calls,
    sent,
    uploads,
    injectMessage(input) {
      const message: Record<string, unknown> = {
        id: nextId(),
        type: input.message_reference ? 19 : 0,
        channel_id: input.channel_id,
        ...(input.guild_id ? { guild_id: input.guild_id } : {}),
        author: input.author ?? human,
        content: input.content,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: input.mentions ?? [],
        mention_roles: [],
        attachments: [...(input.attachments ?? []), ...(input.files ?? []).map((f) => attach(input.channel_id, f))],
        embeds: [],
        pinned: false,
        ...(input.message_reference ? { message_reference: input.message_reference } : {}),
      };
      for (const s of sessions.values()) if (wants(s, message)) record(s, 'MESSAGE_CREATE', messageFor(s, message));
      return message;
    },
    dispatch(t, d) {
      for (const s of sessions.values()) record(s, t, d);
    },
    dropConnections(code) {
      for (const ws of wss.clients) {
        if (code === undefined) ws.terminate();
        else ws.close(code);
      }
    },
    invalidateSessions(resumable) {
      for (const s of [...sessions.values()]) {
        if (s.socket) send(s.socket, { op: 9, d: resumable });
        if (!resumable) sessions.delete(s.id);
      }
    },
    requestReconnect() {
      for (const ws of wss.clients) send(ws, { op: 7, d: null });
    },
    rateLimitNext(route, retryAfter, global = false) {
      limits.set(route, { retryAfter, global });
    },
    openSockets: () => wss.clients.size,
    connections: () => attempts,
    holdHandshakes(hold) {
      if (hold) held ??= [];
      else {
        const waiting = held ?? [];
        held = undefined;
        for (const answer of waiting) answer();
      }
    },
    async stop() {
      held = undefined;
      for (const socket of pending) socket.destroy();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await http_.close();
    },
  };
}
