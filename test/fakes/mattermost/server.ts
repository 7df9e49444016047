/**
 * A fake Mattermost server speaking the REST v4 and WebSocket API the Mattermost adapter uses: `GET /users/me`,
 * `GET /users/me/channels` (with last_post_at), `GET /channels/{id}/posts` (`since`: posts changed strictly after,
 * at most sinceLimit; or pages by `before`/`after`, `per_page`, `page`; as `{order, posts}`), `POST /posts` (root_id checked, 16,383-rune limit, pending_post_id dropped as a repeat for 30 s),
 * `POST /files` (multipart channel_id + files) and `GET /files/{id}`; `/api/v4/websocket` with the
 * `authentication_challenge` action, `hello`, per-connection `seq`, `posted` events (the post as a JSON string in
 * `data.post`, `channel_type`, `mentions` as a JSON string, `sender_name`) and the `user_typing` action. Errors are
 * `{id, message, status_code}` bodies: 401 for another token; 429 with X-Ratelimit-* headers by `rateLimitNext`.
 */
import { randomBytes } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { listen, readParams, sendJson, type FakeFile } from '../http.ts';

export interface MattermostPostRecord {
  id: string;
  channel_id: string;
  user_id: string;
  root_id: string;
  message: string;
  create_at: number;
  update_at: number;
  delete_at: number;
  type: string;
  file_ids: string[];
  pending_post_id?: string;
  metadata: { files?: Array<{ id: string; name: string; mime_type: string; size: number }> };
}

export interface MattermostFake {
  /** The server_url to configure. */
  url: string;
  token: string;
  bot: { id: string; username: string };
  /** Every REST request (method and path; the token travels in a header) and WebSocket action, in order. */
  calls: Array<{ method: string; path: string; at: number }>;
  /** Posts the bot made, once each. */
  sent: MattermostPostRecord[];
  /** Every POST /posts the bot made, repeats included. */
  postAttempts: number;
  typings: Array<{ channel_id: string; parent_id: string }>;
  uploads: Array<{ id: string; name: string; type: string; data: Buffer; channel_id: string }>;
  /** A channel with the bot and `members`: D (direct, one member), G, O or P. */
  createChannel(type: 'D' | 'G' | 'O' | 'P', members: string[]): string;
  /** A post by `userId` (a user made on first use, username = the id); `files` from addFile. Returns the post id. */
  injectPost(channelId: string, userId: string, message: string, options?: { rootId?: string; fileIds?: string[] }): string;
  addFile(data: Buffer, type: string, name: string): string;
  /** The next REST request whose path contains `route` is answered 429 with X-Ratelimit-Reset = seconds. */
  rateLimitNext(route: string, seconds: number): void;
  /** Closes every WebSocket abruptly, as a network failure does; posts made until a new one opens are not pushed. */
  dropConnections(): void;
  /** Open, authenticated WebSockets. */
  sockets(): number;
  stop(): Promise<void>;
}

interface Channel {
  id: string;
  type: string;
  members: Set<string>;
  posts: MattermostPostRecord[];
  last_post_at: number;
}

const API = '/api/v4';
const id26 = () => randomBytes(13).toString('hex');
const err = (status: number, id: string, message: string) => ({ id, message, status_code: status, request_id: id26() });

export async function startMattermostFake(options: { sinceLimit?: number } = {}): Promise<MattermostFake> {
  /** The most posts a `since` answer holds (the server's 1,000). */
  const sinceLimit = options.sinceLimit ?? 1000;
  const token = `mmtoken${randomBytes(12).toString('hex')}`;
  const bot = { id: id26(), username: 'talon-bot' };
  const users = new Map<string, string>([[bot.id, bot.username]]);
  const channels = new Map<string, Channel>();
  const posts = new Map<string, MattermostPostRecord>();
  const files = new Map<string, { name: string; type: string; data: Buffer }>();
  const pending = new Map<string, { post: MattermostPostRecord; at: number }>();
  const rateLimits: Array<{ route: string; seconds: number }> = [];
  const sockets = new Map<WebSocket, { seq: number }>();
  let clock = Date.now();
  /** Strictly increasing times, so `since` never hides a post made in the same millisecond. */
  const now = () => (clock = Math.max(clock + 1, Date.now()));

  const emit = (ev: string, data: Record<string, unknown>, channelId: string) => {
    for (const [ws, state] of sockets)
      ws.send(JSON.stringify({ event: ev, data, broadcast: { channel_id: channelId, user_id: '', team_id: '' }, seq: state.seq++ }));
  };

  const createPost = (channel: Channel, userId: string, message: string, rootId: string, fileIds: string[], pendingId?: string) => {
    const at = now();
    const meta = fileIds.map((f) => ({ id: f, name: files.get(f)!.name, mime_type: files.get(f)!.type, size: files.get(f)!.data.length }));
    const post: MattermostPostRecord = {
      id: id26(),
      channel_id: channel.id,
      user_id: userId,
      root_id: rootId,
      message,
      create_at: at,
      update_at: at,
      delete_at: 0,
      type: '',
      file_ids: fileIds,
      ...(pendingId ? { pending_post_id: pendingId } : {}),
      metadata: meta.length ? { files: meta } : {},
    };
    channel.posts.push(post);
    channel.last_post_at = at;
    posts.set(post.id, post);
    // The server's mentions: the other member of a DM, else the members named by @username.
    const mentions = [...channel.members].filter(
      (m) => m !== userId && (channel.type === 'D' || new RegExp(`(^|\\W)@${users.get(m)}(\\W|$)`, 'i').test(message)),
    );
    emit(
      'posted',
      {
        channel_type: channel.type,
        channel_display_name: channel.id,
        channel_name: channel.id,
        sender_name: `@${users.get(userId)}`,
        team_id: '',
        post: JSON.stringify(post),
        ...(mentions.length ? { mentions: JSON.stringify(mentions) } : {}),
      },
      channel.id,
    );
    return post;
  };

  /**
   * A page of a channel's posts, newest first: `since` the posts changed after it, at most sinceLimit of them and then
   * the newest (the server's LIMIT comes before its ORDER BY: which ones is not defined); `before`/`after` a post id
   * with `per_page` and `page`, or the newest page.
   */
  const postsPage = (channel: Channel, q: URLSearchParams): MattermostPostRecord[] => {
    const at = (id: string | null) => (id ? (posts.get(id)?.create_at ?? NaN) : undefined);
    if (q.has('since'))
      return channel.posts
        .filter((x) => x.update_at > Number(q.get('since')))
        .slice(-sinceLimit)
        .reverse();
    const live = channel.posts.filter((x) => x.delete_at === 0);
    const perPage = Math.min(Number(q.get('per_page') ?? 60), 200);
    const offset = Number(q.get('page') ?? 0) * perPage;
    const after = at(q.get('after'));
    if (after !== undefined)
      return live
        .filter((x) => x.create_at > after)
        .slice(offset, offset + perPage)
        .reverse();
    const before = at(q.get('before')) ?? Infinity;
    return live
      .filter((x) => x.create_at < before)
      .reverse()
      .slice(offset, offset + perPage);
  };

  const fake: Omit<MattermostFake, 'url' | 'stop'> = {
    token,
    bot,
    calls: [],
    sent: [],
    postAttempts: 0,
    typings: [],
    uploads: [],
    createChannel(type, members) {
      const channel: Channel = { id: id26(), type, members: new Set([bot.id, ...members]), posts: [], last_post_at: 0 };
      for (const m of members) if (!users.has(m)) users.set(m, m);
      channels.set(channel.id, channel);
      return channel.id;
    },
    injectPost(channelId, userId, message, o = {}) {
      if (!users.has(userId)) users.set(userId, userId);
      return createPost(channels.get(channelId)!, userId, message, o.rootId ?? '', o.fileIds ?? []).id;
    },
    addFile(data, type, name) {
      const fileId = id26();
      files.set(fileId, { name, type, data });
      return fileId;
    },
    rateLimitNext(route, seconds) {
      rateLimits.push({ route, seconds });
    },
    dropConnections() {
      for (const ws of sockets.keys()) ws.terminate();
      sockets.clear();
    },
    sockets: () => sockets.size,
  };

  const http_ = await listen(async (req, res, url) => {
    const path = url.pathname;
    fake.calls.push({ method: req.method ?? 'GET', path, at: Date.now() });
    if (req.headers.authorization !== `Bearer ${token}`)
      return sendJson(res, 401, err(401, 'api.context.session_expired.app_error', 'Invalid or expired session, please login again.'));
    const limit = rateLimits.findIndex((r) => path.includes(r.route));
    if (limit >= 0) {
      const [{ seconds }] = rateLimits.splice(limit, 1);
      res.writeHead(429, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(seconds), 'content-type': 'text/plain' });
      return void res.end('limit exceeded\n');
    }
    const m = (re: RegExp) => re.exec(path.slice(API.length));
    if (!path.startsWith(API)) return sendJson(res, 404, err(404, 'api.context.404.app_error', 'Sorry, we could not find the page.'));
    if (req.method === 'GET' && path === `${API}/users/me`) return sendJson(res, 200, { id: bot.id, username: bot.username, is_bot: true });
    if (req.method === 'GET' && path === `${API}/users/me/channels`)
      return sendJson(
        res,
        200,
        [...channels.values()].filter((c) => c.members.has(bot.id)).map((c) => ({ id: c.id, type: c.type, name: c.id, last_post_at: c.last_post_at })),
      );
    let p = m(/^\/channels\/([^/]+)\/posts$/);
    if (req.method === 'GET' && p) {
      const channel = channels.get(p[1]!);
      if (!channel?.members.has(bot.id))
        return sendJson(res, 403, err(403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.'));
      const found = postsPage(channel, url.searchParams);
      return sendJson(res, 200, { order: found.map((x) => x.id), posts: Object.fromEntries(found.map((x) => [x.id, x])), next_post_id: '', prev_post_id: '' });
    }
    if (req.method === 'POST' && path === `${API}/posts`) {
      fake.postAttempts++;
      const body = (await readParams(req, url)) as { channel_id?: string; message?: string; root_id?: string; file_ids?: string[]; pending_post_id?: string };
      const channel = channels.get(body.channel_id ?? '');
      if (!channel?.members.has(bot.id))
        return sendJson(res, 403, err(403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.'));
      if ([...(body.message ?? '')].length > 16_383) return sendJson(res, 400, err(400, 'model.post.is_valid.msg.app_error', 'Invalid Message.'));
      if (body.root_id && posts.get(body.root_id)?.channel_id !== channel.id)
        return sendJson(res, 400, err(400, 'api.post.create_post.root_id.app_error', 'Invalid RootId parameter.'));
      if (!body.message && !body.file_ids?.length) return sendJson(res, 400, err(400, 'model.post.is_valid.msg.app_error', 'Invalid Message.'));
      const seen = body.pending_post_id ? pending.get(body.pending_post_id) : undefined;
      if (seen && Date.now() - seen.at < 30_000) return sendJson(res, 201, seen.post);
      const post = createPost(channel, bot.id, body.message ?? '', body.root_id ?? '', body.file_ids ?? [], body.pending_post_id);
      if (body.pending_post_id) pending.set(body.pending_post_id, { post, at: Date.now() });
      fake.sent.push(post);
      return sendJson(res, 201, post);
    }
    if (req.method === 'POST' && path === `${API}/files`) {
      const params = await readParams(req, url);
      const file = params.files as FakeFile | undefined;
      const channelId = String(params.channel_id ?? '');
      if (!file || !channels.get(channelId)?.members.has(bot.id))
        return sendJson(res, 400, err(400, 'api.file.upload_file.incorrect_number_of_files.app_error', 'Unable to upload files.'));
      const fileId = fake.addFile(file.content, file.type, file.name);
      fake.uploads.push({ id: fileId, name: file.name, type: file.type, data: file.content, channel_id: channelId });
      return sendJson(res, 201, { file_infos: [{ id: fileId, name: file.name, mime_type: file.type, size: file.content.length }], client_ids: [] });
    }
    p = m(/^\/files\/([^/]+)$/);
    if (req.method === 'GET' && p) {
      const file = files.get(p[1]!);
      if (!file) return sendJson(res, 404, err(404, 'app.file_info.get.app_error', 'Unable to get the file info.'));
      res.writeHead(200, { 'content-type': file.type, 'content-length': file.data.length });
      return void res.end(file.data);
    }
    return sendJson(res, 404, err(404, 'api.context.404.app_error', 'Sorry, we could not find the page.'));
  });

  const wss = new WebSocketServer({ noServer: true });
  http_.server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== `${API}/websocket`) return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (raw) => {
        const frame = JSON.parse(String(raw)) as { seq: number; action: string; data?: Record<string, unknown> };
        fake.calls.push({ method: 'WS', path: frame.action, at: Date.now() });
        if (frame.action === 'authentication_challenge') {
          if (frame.data?.token !== token) {
            ws.send(JSON.stringify({ status: 'FAIL', seq_reply: frame.seq, error: { id: 'api.web_socket_router.not_authenticated.app_error' } }));
            return ws.close();
          }
          ws.send(JSON.stringify({ status: 'OK', seq_reply: frame.seq }));
          sockets.set(ws, { seq: 1 });
          return ws.send(JSON.stringify({ event: 'hello', data: { server_version: '10.5.0', connection_id: id26() }, broadcast: { user_id: bot.id }, seq: 0 }));
        }
        if (!sockets.has(ws))
          return ws.send(JSON.stringify({ status: 'FAIL', seq_reply: frame.seq, error: { id: 'api.web_socket_router.not_authenticated.app_error' } }));
        if (frame.action === 'user_typing')
          fake.typings.push({ channel_id: String(frame.data?.channel_id ?? ''), parent_id: String(frame.data?.parent_id ?? '') });
        ws.send(JSON.stringify({ status: 'OK', seq_reply: frame.seq }));
      });
      ws.on('close', () => sockets.delete(ws));
    });
  });

  return {
    ...fake,
    url: `http://127.0.0.1:${http_.port}`,
    get postAttempts() {
      return fake.postAttempts;
    },
    async stop() {
      fake.dropConnections();
      wss.close();
      await http_.close();
    },
  };
}
