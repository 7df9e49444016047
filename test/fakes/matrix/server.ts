/**
 * A fake Matrix homeserver speaking the client-server API the Matrix adapter uses: `/login` (m.login.password),
 * `/account/whoami`, `/profile/{user}/displayname`, `/sync` (`since`, `timeout` long polling, `next_batch`),
 * `PUT /rooms/{room}/send/{type}/{txnId}` idempotent per access token and txnId (the spec's transaction semantics),
 * `PUT /rooms/{room}/typing/{user}`, `/join/{room}`, `/rooms/{room}/join|leave|joined_members|event/{id}`,
 * `POST /_matrix/media/v3/upload` and authenticated downloads (`/_matrix/client/v1/media/download`, and the legacy
 * `/_matrix/media/v3/download`). Errors are Matrix bodies: 401 M_UNKNOWN_TOKEN / M_MISSING_TOKEN, 429
 * M_LIMIT_EXCEEDED with retry_after_ms, 404 M_NOT_FOUND / M_UNRECOGNIZED.
 */
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { listen, sendJson } from '../http.ts';

export interface MatrixFakeOptions {
  userId?: string;
  displayName?: string;
  password?: string;
}

export interface MatrixEventRecord {
  type: string;
  event_id: string;
  sender: string;
  room_id: string;
  origin_server_ts: number;
  state_key?: string;
  content: Record<string, unknown>;
}

export interface MatrixFake {
  /** The homeserver_url to configure. */
  url: string;
  userId: string;
  token: string;
  serverName: string;
  /** Every request, in order: method and path (no token: it travels in the Authorization header). */
  calls: Array<{ method: string; path: string; at: number }>;
  /** Events the bot created (one per transaction id), in order. */
  sent: MatrixEventRecord[];
  /** Every PUT …/send the bot made, repeats of a transaction id included. */
  sendAttempts: Array<{ roomId: string; txnId: string }>;
  typings: Array<{ roomId: string; typing: boolean; timeout?: number }>;
  uploads: Array<{ uri: string; name?: string; type: string; data: Buffer }>;
  joined: string[];
  left: string[];
  /** A room the bot is in with `members` (its own user added); `encrypted` adds m.room.encryption. */
  createRoom(options?: { members?: string[]; encrypted?: boolean; id?: string }): string;
  /** An invite of the bot to a new room by `from`; `direct` marks it is_direct; returns the room id. */
  invite(from: string, options?: { direct?: boolean; encrypted?: boolean; members?: string[] }): string;
  /** A room message from `sender` (any content; `body` is a shortcut for m.text); returns its event id. */
  injectMessage(roomId: string, sender: string, content: Record<string, unknown> | string, type?: string): string;
  /** Puts bytes in the media repository as another user would; returns the mxc:// URI. */
  addMedia(data: Buffer, type: string, name?: string): string;
  /** The next request whose path contains `route` is answered 429 M_LIMIT_EXCEEDED with retry_after_ms. */
  rateLimitNext(route: string, retryAfterMs: number): void;
  /** Sends are taken (the event is created) but not answered until `release()`; `held` counts them. */
  holdSends(): { release(): void; held(): number };
  /**
   * Joins hang (as one over federation to an unreachable server can): not answered, and not made, until `release()`;
   * one the client gave up meanwhile is dropped. `held` counts those waiting.
   */
  holdJoins(): { release(): void; held(): number };
  /** Destroys the sockets of the syncs in flight with no answer, as a network failure does. */
  dropConnections(): void;
  stop(): Promise<void>;
}

interface Room {
  id: string;
  members: Set<string>;
  events: MatrixEventRecord[];
}

interface Entry {
  pos: number;
  roomId: string;
  kind: 'timeline' | 'invite' | 'leave';
  event?: MatrixEventRecord;
}

const PREFIX = '/_matrix/client/v3';

export async function startMatrixFake(options: MatrixFakeOptions = {}): Promise<MatrixFake> {
  const serverName = 'fake.matrix.test';
  const userId = options.userId ?? `@talon:${serverName}`;
  const displayName = options.displayName ?? 'Talon Bot';
  const password = options.password ?? 'secret-password';
  let token = `syt_${randomBytes(12).toString('hex')}`;
  const rooms = new Map<string, Room>();
  const stream: Entry[] = [];
  const invites = new Map<string, MatrixEventRecord[]>();
  const txns = new Map<string, string>();
  const media = new Map<string, { type: string; name?: string; data: Buffer }>();
  const rateLimits: Array<{ route: string; ms: number }> = [];
  const waiters = new Set<() => void>();
  const syncs = new Set<http.ServerResponse>();
  const heldSends: Array<() => void> = [];
  let holding = false;
  const heldJoins: Array<() => void> = [];
  let holdingJoins = false;
  let seq = 0;

  const fake: Omit<MatrixFake, 'url' | 'stop'> = {
    userId,
    get token() {
      return token;
    },
    serverName,
    calls: [],
    sent: [],
    sendAttempts: [],
    typings: [],
    uploads: [],
    joined: [],
    left: [],
    createRoom(o = {}) {
      const room = newRoom(o.id);
      for (const m of [userId, ...(o.members ?? [])]) room.members.add(m);
      if (o.encrypted)
        append(room, { type: 'm.room.encryption', sender: o.members?.[0] ?? userId, state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } });
      return room.id;
    },
    invite(from, o = {}) {
      const room = newRoom();
      for (const m of [from, ...(o.members ?? [])]) room.members.add(m);
      if (o.encrypted) append(room, { type: 'm.room.encryption', sender: from, state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } }, false);
      const state = [
        event(room.id, { type: 'm.room.create', sender: from, state_key: '', content: { creator: from } }),
        ...(o.encrypted ? [event(room.id, { type: 'm.room.encryption', sender: from, state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } })] : []),
        event(room.id, { type: 'm.room.member', sender: from, state_key: userId, content: { membership: 'invite', ...(o.direct ? { is_direct: true } : {}) } }),
      ];
      invites.set(room.id, state);
      push({ roomId: room.id, kind: 'invite' });
      return room.id;
    },
    injectMessage(roomId, sender, content, type = 'm.room.message') {
      const room = rooms.get(roomId);
      if (!room) throw new Error(`no room ${roomId}`);
      room.members.add(sender);
      const c = typeof content === 'string' ? { msgtype: 'm.text', body: content } : content;
      return append(room, { type, sender, content: c }).event_id;
    },
    addMedia(data, type, name) {
      const id = randomBytes(8).toString('hex');
      media.set(id, { type, data, ...(name ? { name } : {}) });
      return `mxc://${serverName}/${id}`;
    },
    rateLimitNext(route, ms) {
      rateLimits.push({ route, ms });
    },
    holdSends() {
      holding = true;
      return {
        release() {
          holding = false;
          for (const answer of heldSends.splice(0)) answer();
        },
        held: () => heldSends.length,
      };
    },
    holdJoins() {
      holdingJoins = true;
      return {
        release() {
          holdingJoins = false;
          for (const answer of heldJoins.splice(0)) answer();
        },
        held: () => heldJoins.length,
      };
    },
    dropConnections() {
      for (const res of syncs) res.destroy();
      syncs.clear();
    },
  };

  function newRoom(id?: string): Room {
    const room: Room = { id: id ?? `!${randomBytes(8).toString('hex')}:${serverName}`, members: new Set(), events: [] };
    rooms.set(room.id, room);
    return room;
  }
  function event(roomId: string, e: Omit<MatrixEventRecord, 'event_id' | 'room_id' | 'origin_server_ts'>): MatrixEventRecord {
    return { ...e, room_id: roomId, event_id: `$${randomBytes(12).toString('base64url')}`, origin_server_ts: Date.now() };
  }
  function append(room: Room, e: Omit<MatrixEventRecord, 'event_id' | 'room_id' | 'origin_server_ts'>, visible = true): MatrixEventRecord {
    const ev = event(room.id, e);
    room.events.push(ev);
    if (visible) push({ roomId: room.id, kind: 'timeline', event: ev });
    return ev;
  }
  function push(entry: Omit<Entry, 'pos'>): void {
    stream.push({ ...entry, pos: ++seq });
    for (const wake of [...waiters]) wake();
  }

  /** The sync answer for the entries after `since` (all rooms' state when there is none). */
  function syncBody(since: number | undefined) {
    const join: Record<string, { timeline: { events: MatrixEventRecord[] }; state: { events: MatrixEventRecord[] } }> = {};
    const invite: Record<string, { invite_state: { events: MatrixEventRecord[] } }> = {};
    const leave: Record<string, object> = {};
    const joinedRoom = (id: string) => (join[id] ??= { timeline: { events: [] }, state: { events: [] } });
    if (since === undefined) {
      for (const room of rooms.values())
        if (room.members.has(userId)) joinedRoom(room.id).state.events.push(...room.events.filter((e) => e.state_key !== undefined));
      for (const [id, state] of invites) invite[id] = { invite_state: { events: state } };
    } else {
      for (const entry of stream) {
        if (entry.pos <= since) continue;
        const room = rooms.get(entry.roomId)!;
        if (entry.kind === 'invite' && invites.has(entry.roomId)) invite[entry.roomId] = { invite_state: { events: invites.get(entry.roomId)! } };
        if (entry.kind === 'leave') leave[entry.roomId] = {};
        if (entry.kind === 'timeline' && room.members.has(userId)) joinedRoom(entry.roomId).timeline.events.push(entry.event!);
      }
    }
    return { next_batch: `s${seq}`, rooms: { join, invite, leave } };
  }

  const error = (res: http.ServerResponse, status: number, errcode: string, message: string, extra: object = {}) =>
    sendJson(res, status, { errcode, error: message, ...extra });

  /** POST /join/{room} (or /rooms/{room}/join): an invited room (or one the bot is in) is joined. */
  function join(res: http.ServerResponse, roomId: string): void {
    const room = rooms.get(roomId);
    if (!room || (!invites.has(room.id) && !room.members.has(userId))) return error(res, 403, 'M_FORBIDDEN', 'You are not invited to this room.');
    invites.delete(room.id);
    room.members.add(userId);
    fake.joined.push(room.id);
    append(room, { type: 'm.room.member', sender: userId, state_key: userId, content: { membership: 'join' } });
    return sendJson(res, 200, { room_id: room.id });
  }

  async function readBody(req: http.IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  const server = await listen(async (req, res, url) => {
    const method = req.method ?? 'GET';
    // Room, event and user ids are percent-encoded path segments (`!room%3Aserver`).
    const path = url.pathname.split('/').map(decodeURIComponent).join('/');
    fake.calls.push({ method, path, at: Date.now() });
    if (!path.startsWith('/_matrix/')) return error(res, 404, 'M_UNRECOGNIZED', 'Unrecognized request');
    if (method === 'POST' && path === `${PREFIX}/login`) {
      const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as { type?: string; password?: string; identifier?: { user?: string } };
      const user = body.identifier?.user;
      if (body.type !== 'm.login.password' || body.password !== password || (user !== userId && user !== userId.slice(1).split(':')[0]))
        return error(res, 403, 'M_FORBIDDEN', 'Invalid username or password');
      token = `syt_${randomBytes(12).toString('hex')}`;
      return sendJson(res, 200, { user_id: userId, access_token: token, device_id: 'FAKEDEVICE', home_server: serverName });
    }
    const auth = req.headers.authorization;
    if (!auth) return error(res, 401, 'M_MISSING_TOKEN', 'Missing access token');
    if (auth !== `Bearer ${token}`) return error(res, 401, 'M_UNKNOWN_TOKEN', 'Invalid access token passed.', { soft_logout: false });
    const limit = rateLimits.findIndex((r) => path.includes(r.route));
    if (limit >= 0) {
      const { ms } = rateLimits.splice(limit, 1)[0]!;
      return error(res, 429, 'M_LIMIT_EXCEEDED', 'Too Many Requests', { retry_after_ms: ms });
    }
    const m = (pattern: RegExp) => pattern.exec(path);
    let p: RegExpExecArray | null;

    if (method === 'GET' && path === `${PREFIX}/account/whoami`) return sendJson(res, 200, { user_id: userId, device_id: 'FAKEDEVICE' });
    if (method === 'GET' && (p = m(/^\/_matrix\/client\/v3\/profile\/([^/]+)\/displayname$/)))
      return p[1] === userId ? sendJson(res, 200, { displayname: displayName }) : error(res, 404, 'M_NOT_FOUND', 'Profile not found');
    if (method === 'GET' && path === `${PREFIX}/sync`) {
      const since = url.searchParams.get('since');
      const from = since === null ? undefined : Number(since.slice(1));
      if (from !== undefined && (!since!.startsWith('s') || !Number.isInteger(from))) return error(res, 400, 'M_INVALID_PARAM', 'Invalid since token');
      const timeout = Math.min(Number(url.searchParams.get('timeout') ?? 0) || 0, 60_000);
      if (from !== undefined && seq <= from && timeout > 0) {
        syncs.add(res);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, timeout);
          waiters.add(wake);
          res.once('close', wake);
        });
        syncs.delete(res);
        if (res.destroyed) return;
      }
      return sendJson(res, 200, syncBody(from));
    }
    if (method === 'PUT' && (p = m(/^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/([^/]+)\/([^/]+)$/))) {
      const [, roomId, type, txnId] = p as unknown as [string, string, string, string];
      fake.sendAttempts.push({ roomId, txnId });
      const room = rooms.get(roomId);
      const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as Record<string, unknown>;
      if (!room || !room.members.has(userId)) return error(res, 403, 'M_FORBIDDEN', `User ${userId} not in room ${roomId}`);
      const key = `${token} ${txnId}`;
      let eventId = txns.get(key);
      if (!eventId) {
        if (Buffer.byteLength(JSON.stringify(body)) > 65_536) return error(res, 413, 'M_TOO_LARGE', 'event too large');
        const ev = append(room, { type, sender: userId, content: body });
        txns.set(key, ev.event_id);
        fake.sent.push(ev);
        eventId = ev.event_id;
      }
      const answer = () => sendJson(res, 200, { event_id: eventId });
      if (holding) return void heldSends.push(answer);
      return answer();
    }
    if (method === 'PUT' && (p = m(/^\/_matrix\/client\/v3\/rooms\/([^/]+)\/typing\/([^/]+)$/))) {
      const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as { typing?: boolean; timeout?: number };
      if (p[2] !== userId) return error(res, 403, 'M_FORBIDDEN', "Cannot set another user's typing state");
      fake.typings.push({ roomId: p[1]!, typing: body.typing === true, ...(body.timeout !== undefined ? { timeout: body.timeout } : {}) });
      return sendJson(res, 200, {});
    }
    if (method === 'POST' && ((p = m(/^\/_matrix\/client\/v3\/join\/([^/]+)$/)) || (p = m(/^\/_matrix\/client\/v3\/rooms\/([^/]+)\/join$/)))) {
      const roomId = p[1]!;
      if (holdingJoins) return void heldJoins.push(() => void (res.destroyed || res.writableEnded ? undefined : join(res, roomId)));
      return join(res, roomId);
    }
    if (method === 'POST' && (p = m(/^\/_matrix\/client\/v3\/rooms\/([^/]+)\/leave$/))) {
      const room = rooms.get(p[1]!);
      if (!room) return error(res, 404, 'M_NOT_FOUND', 'Unknown room');
      invites.delete(room.id);
      room.members.delete(userId);
      fake.left.push(room.id);
      push({ roomId: room.id, kind: 'leave' });
      return sendJson(res, 200, {});
    }
    if (method === 'GET' && (p = m(/^\/_matrix\/client\/v3\/rooms\/([^/]+)\/joined_members$/))) {
      const room = rooms.get(p[1]!);
      if (!room || !room.members.has(userId)) return error(res, 403, 'M_FORBIDDEN', 'You are not in this room.');
      return sendJson(res, 200, { joined: Object.fromEntries([...room.members].map((u) => [u, {}])) });
    }
    if (method === 'GET' && (p = m(/^\/_matrix\/client\/v3\/rooms\/([^/]+)\/event\/([^/]+)$/))) {
      const ev = rooms.get(p[1]!)?.events.find((e) => e.event_id === p![2]);
      return ev ? sendJson(res, 200, ev) : error(res, 404, 'M_NOT_FOUND', 'Event not found.');
    }
    if (method === 'POST' && path === '/_matrix/media/v3/upload') {
      const data = await readBody(req);
      const name = url.searchParams.get('filename') ?? undefined;
      const uri = fake.addMedia(data, String(req.headers['content-type'] ?? 'application/octet-stream'), name);
      fake.uploads.push({ uri, type: String(req.headers['content-type'] ?? 'application/octet-stream'), data, ...(name ? { name } : {}) });
      return sendJson(res, 200, { content_uri: uri });
    }
    if (method === 'GET' && (p = m(/^\/_matrix\/(?:client\/v1\/media|media\/v3)\/download\/([^/]+)\/([^/]+)/))) {
      const file = p[1] === serverName ? media.get(p[2]!) : undefined;
      if (!file) return error(res, 404, 'M_NOT_FOUND', 'Not found');
      res.writeHead(200, { 'content-type': file.type, 'content-length': file.data.length });
      return void res.end(file.data);
    }
    return error(res, 404, 'M_UNRECOGNIZED', 'Unrecognized request');
  });

  return Object.assign(fake, {
    url: `http://127.0.0.1:${server.port}`,
    async stop() {
      fake.dropConnections();
      for (const answer of heldSends.splice(0)) answer();
      heldJoins.length = 0;
      await server.close();
    },
  }) as MatrixFake;
}
