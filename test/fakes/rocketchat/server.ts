/**
 * A fake Rocket.Chat server speaking the REST and realtime (DDP) API the Rocket.Chat adapter uses. REST (/api/v1,
 * X-User-Id + X-Auth-Token): `GET /me`, `GET /subscriptions.get`, `GET /im|channels|groups.history` (`roomId`,
 * `oldest` exclusive, newest first, `count` and `offset`), `POST /chat.sendMessage` (a client `_id` kept; a repeat of it refused as the
 * unique index does; `tmid` checked; 5,000-character limit), `GET /chat.getMessage`. DDP on /websocket: `connect` →
 * `connected`, `ping`/`pong`, `method login` with `resume` (a wrong token answers error 403), `sub
 * stream-room-messages __my_messages__` → `ready`, each message as `changed` with `fields.args = [message,
 * {roomType, roomName, roomParticipant}]`, `method stream-notify-room` (`<rid>/user-activity`) recorded. Errors:
 * 401 `{status: 'error'}`, 400 `{success: false, error}`, 429 with X-RateLimit-Reset (epoch ms) by `rateLimitNext`.
 */
import { randomBytes } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { listen, readParams, sendJson } from '../http.ts';

export interface RocketChatMessageRecord {
  _id: string;
  rid: string;
  msg: string;
  tmid?: string;
  ts: string;
  u: { _id: string; username: string };
  mentions: Array<{ _id: string; username: string }>;
  _updatedAt: string;
}

export interface RocketChatFake {
  url: string;
  userId: string;
  token: string;
  username: string;
  calls: Array<{ method: string; path: string; at: number }>;
  /** Messages the bot made, once each. */
  sent: RocketChatMessageRecord[];
  /** Every chat.sendMessage call, repeats included. */
  sendAttempts: Array<{ _id?: string; rid?: string }>;
  activities: Array<{ rid: string; username: string; activity: string[] }>;
  /** A room with the bot and `members`: d (direct), c (public) or p (private). */
  createRoom(type: 'd' | 'c' | 'p', members: string[]): string;
  /** A message by `username` (a user made on first use); `@name` in the text fills `mentions`. Returns its _id. */
  injectMessage(rid: string, username: string, text: string, options?: { tmid?: string }): string;
  rateLimitNext(route: string, seconds: number): void;
  /** Closes every socket abruptly; messages sent until a new one subscribes are not pushed. */
  dropConnections(): void;
  stop(): Promise<void>;
}

interface Room {
  id: string;
  t: string;
  members: Set<string>;
  messages: RocketChatMessageRecord[];
}

const ALPHABET = '23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz';
const randomId = () => [...randomBytes(17)].map((b) => ALPHABET[b % ALPHABET.length]).join('');

export async function startRocketChatFake(): Promise<RocketChatFake> {
  const userId = randomId();
  const username = 'talon.bot';
  const token = randomBytes(24).toString('base64url');
  const users = new Map<string, string>([[username, userId]]);
  const rooms = new Map<string, Room>();
  const messages = new Map<string, RocketChatMessageRecord>();
  const rateLimits: Array<{ route: string; seconds: number }> = [];
  const subscribed = new Set<WebSocket>();
  const sockets = new Set<WebSocket>();
  let clock = Date.now();
  const now = () => (clock = Math.max(clock + 1, Date.now()));

  const userOf = (name: string) => users.get(name) ?? (users.set(name, randomId()), users.get(name)!);

  const store = (room: Room, from: string, text: string, tmid?: string, id?: string) => {
    const ts = new Date(now()).toISOString();
    const mentions = [...text.matchAll(/(?:^|\s)@([\w.-]+)/g)].filter((m) => users.has(m[1]!)).map((m) => ({ _id: users.get(m[1]!)!, username: m[1]! }));
    const message: RocketChatMessageRecord = {
      _id: id ?? randomId(),
      rid: room.id,
      msg: text,
      ...(tmid ? { tmid } : {}),
      ts,
      u: { _id: userOf(from), username: from },
      mentions,
      _updatedAt: ts,
    };
    room.messages.push(message);
    messages.set(message._id, message);
    // The stream carries dates as EJSON.
    const wire = { ...message, ts: { $date: Date.parse(ts) }, _updatedAt: { $date: Date.parse(ts) } };
    for (const ws of subscribed)
      ws.send(
        JSON.stringify({
          msg: 'changed',
          collection: 'stream-room-messages',
          id: 'id',
          fields: { eventName: '__my_messages__', args: [wire, { roomType: room.t, roomName: room.id, roomParticipant: true }] },
        }),
      );
    return message;
  };

  const fake: Omit<RocketChatFake, 'url' | 'stop'> = {
    userId,
    token,
    username,
    calls: [],
    sent: [],
    sendAttempts: [],
    activities: [],
    createRoom(t, members) {
      const room: Room = { id: randomId(), t, members: new Set([userId, ...members.map(userOf)]), messages: [] };
      rooms.set(room.id, room);
      return room.id;
    },
    injectMessage(rid, from, text, o = {}) {
      return store(rooms.get(rid)!, from, text, o.tmid)._id;
    },
    rateLimitNext(route, seconds) {
      rateLimits.push({ route, seconds });
    },
    dropConnections() {
      for (const ws of sockets) ws.terminate();
      sockets.clear();
      subscribed.clear();
    },
  };

  const http_ = await listen(async (req, res, url) => {
    const path = url.pathname;
    fake.calls.push({ method: req.method ?? 'GET', path, at: Date.now() });
    if (req.headers['x-user-id'] !== userId || req.headers['x-auth-token'] !== token)
      return sendJson(res, 401, { status: 'error', message: 'You must be logged in to do this.' });
    const limit = rateLimits.findIndex((r) => path.includes(r.route));
    if (limit >= 0) {
      const [{ seconds }] = rateLimits.splice(limit, 1);
      return sendJson(
        res,
        429,
        {
          success: false,
          error: `Error, too many requests. Please slow down. You must wait ${seconds} seconds before trying this endpoint again. [error-too-many-requests]`,
        },
        { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Date.now() + seconds * 1000) },
      );
    }
    const api = path.replace(/^\/api\/v1/, '');
    if (req.method === 'GET' && api === '/me') return sendJson(res, 200, { _id: userId, username, success: true });
    if (req.method === 'GET' && api === '/subscriptions.get')
      return sendJson(res, 200, {
        update: [...rooms.values()].filter((r) => r.members.has(userId)).map((r) => ({ rid: r.id, t: r.t, name: r.id, u: { _id: userId, username } })),
        remove: [],
        success: true,
      });
    const history = /^\/(im|channels|groups)\.history$/.exec(api);
    if (req.method === 'GET' && history) {
      const room = rooms.get(url.searchParams.get('roomId') ?? '');
      if (!room || { im: 'd', channels: 'c', groups: 'p' }[history[1] as 'im'] !== room.t)
        return sendJson(res, 400, { success: false, error: 'error-room-not-found' });
      const oldest = Date.parse(url.searchParams.get('oldest') ?? '1970-01-01T00:00:00Z');
      const count = Number(url.searchParams.get('count') ?? 20);
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const found = room.messages
        .filter((m) => Date.parse(m.ts) > oldest)
        .reverse()
        .slice(offset, offset + count);
      return sendJson(res, 200, { messages: found, success: true });
    }
    if (req.method === 'GET' && api === '/chat.getMessage') {
      const message = messages.get(url.searchParams.get('msgId') ?? '');
      return message ? sendJson(res, 200, { message, success: true }) : sendJson(res, 400, { success: false, error: 'Message not found' });
    }
    if (req.method === 'POST' && api === '/chat.sendMessage') {
      const { message } = (await readParams(req, url)) as { message?: { _id?: string; rid?: string; msg?: string; tmid?: string } };
      fake.sendAttempts.push({ ...(message?._id ? { _id: message._id } : {}), ...(message?.rid ? { rid: message.rid } : {}) });
      const room = rooms.get(message?.rid ?? '');
      if (!message || !room?.members.has(userId)) return sendJson(res, 400, { success: false, error: 'error-not-allowed' });
      if (message._id && messages.has(message._id))
        return sendJson(res, 400, {
          success: false,
          error: `E11000 duplicate key error collection: rocketchat_message index: _id_ dup key: { _id: "${message._id}" }`,
        });
      if ((message.msg ?? '').length > 5000)
        return sendJson(res, 400, { success: false, error: 'error-message-size-exceeded', errorType: 'error-message-size-exceeded' });
      if (message.tmid && messages.get(message.tmid)?.rid !== room.id) return sendJson(res, 400, { success: false, error: 'error-invalid-thread' });
      const stored = store(room, username, message.msg ?? '', message.tmid, message._id);
      fake.sent.push(stored);
      return sendJson(res, 200, { message: stored, success: true });
    }
    return sendJson(res, 404, { success: false, error: 'Not found' });
  });

  const wss = new WebSocketServer({ noServer: true });
  http_.server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/websocket') return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      let loggedIn = false;
      const send = (frame: object) => ws.send(JSON.stringify(frame));
      ws.on('message', (raw) => {
        const frame = JSON.parse(String(raw)) as { msg: string; id?: string; method?: string; name?: string; params?: unknown[] };
        fake.calls.push({ method: 'DDP', path: frame.method ?? frame.name ?? frame.msg, at: Date.now() });
        if (frame.msg === 'connect') return send({ msg: 'connected', session: randomId() });
        if (frame.msg === 'ping') return send({ msg: 'pong', ...(frame.id ? { id: frame.id } : {}) });
        if (frame.msg === 'method' && frame.method === 'login') {
          if ((frame.params?.[0] as { resume?: string } | undefined)?.resume !== token)
            return send({
              msg: 'result',
              id: frame.id,
              error: {
                isClientSafe: true,
                error: 403,
                reason: "You've been logged out by the server. Please log in again.",
                message: "You've been logged out by the server. Please log in again. [403]",
                errorType: 'Meteor.Error',
              },
            });
          loggedIn = true;
          return send({ msg: 'result', id: frame.id, result: { id: userId, token, tokenExpires: { $date: Date.now() + 86_400_000 }, type: 'resume' } });
        }
        if (!loggedIn) return send({ msg: 'result', id: frame.id, error: { error: 'not-authorized', reason: 'Not authorized', errorType: 'Meteor.Error' } });
        if (frame.msg === 'sub' && frame.name === 'stream-room-messages' && frame.params?.[0] === '__my_messages__') {
          subscribed.add(ws);
          return send({ msg: 'ready', subs: [frame.id] });
        }
        if (frame.msg === 'method' && frame.method === 'stream-notify-room') {
          const [event, who, activity] = frame.params as [string, string, string[]];
          const [rid, kind] = event.split('/');
          if (kind === 'user-activity') fake.activities.push({ rid: rid!, username: who, activity });
          return send({ msg: 'result', id: frame.id });
        }
        if (frame.msg === 'sub') return send({ msg: 'nosub', id: frame.id, error: { error: 'not-allowed', reason: 'Not allowed' } });
        return send({ msg: 'result', id: frame.id, error: { error: 404, reason: `Method '${frame.method}' not found` } });
      });
      ws.on('close', () => {
        sockets.delete(ws);
        subscribed.delete(ws);
      });
    });
  });

  return {
    ...fake,
    url: `http://127.0.0.1:${http_.port}`,
    async stop() {
      fake.dropConnections();
      wss.close();
      await http_.close();
    },
  };
}
