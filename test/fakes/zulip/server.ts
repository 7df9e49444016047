/**
 * A fake Zulip server speaking the REST API the Zulip adapter uses, with HTTP basic auth (bot email : API key):
 * `GET /api/v1/users/me`, `POST /api/v1/register` (message events; queue_id, last_event_id, max_message_id),
 * `GET /api/v1/events` (long polling: events after last_event_id, which also drops the queue's events up to it;
 * `dont_block`; a heartbeat when nothing came; BAD_EVENT_QUEUE_ID for an unknown or expired queue),
 * `GET /api/v1/messages` (anchor, include_anchor, num_after), `POST /api/v1/messages` (private / stream with topic),
 * `POST /api/v1/typing`, `POST /api/v1/user_uploads` (multipart), `GET /api/v1/user_uploads/{path}` (a temporary
 * URL) and the temporary file itself. Parameters are form-encoded, JSON values as JSON text, as Zulip takes them.
 * Errors are Zulip's `{result: "error", msg, code}`: 401 UNAUTHORIZED, 429 RATE_LIMIT_HIT with retry-after.
 */
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { listen, readParams, sendJson, type FakeFile } from '../http.ts';

export interface ZulipFakeOptions {
  botEmail?: string;
  botName?: string;
  /** How long a poll with nothing to answer waits before a heartbeat (Zulip: about 50 s). */
  heartbeatMs?: number;
}

export interface ZulipMessageRecord {
  id: number;
  sender_id: number;
  sender_email: string;
  sender_full_name: string;
  type: 'stream' | 'private';
  display_recipient: string | Array<{ id: number; email: string; full_name: string }>;
  stream_id?: number;
  subject: string;
  content: string;
  timestamp: number;
  /** Per-recipient flags, as the bot sees them. */
  flags: string[];
}

export interface ZulipFake {
  /** The server_url to configure. */
  url: string;
  botEmail: string;
  botName: string;
  botId: number;
  apiKey: string;
  /** Every request, in order (no credentials: they travel in the Authorization header). */
  calls: Array<{ method: string; path: string; params: Record<string, unknown>; at: number }>;
  /** Messages the bot sent, in order. */
  sent: ZulipMessageRecord[];
  typings: Array<{ op: string; type: string; to?: number[]; stream_id?: number; topic?: string }>;
  uploads: Array<{ path: string; name: string; type: string; data: Buffer }>;
  /** Queues registered, in order. */
  registered: string[];
  /** A user (made on first use): their id. */
  user(email: string): number;
  /** A stream the bot is subscribed to (made on first use): its id. */
  stream(name: string): number;
  /** A direct message from `from` to the bot (and `also`: a group DM); returns the message id. */
  dm(from: string, content: string, also?: string[]): number;
  /** A stream message; `mentioned` sets the bot's `mentioned` flag (and writes @**Bot Name**). */
  streamMessage(stream: string, topic: string, from: string, content: string, options?: { mentioned?: boolean }): number;
  /** Puts a file in the upload area as a user would; returns its /user_uploads/… path. */
  addUpload(data: Buffer, type: string, name: string): string;
  /** The next request whose path contains `route` is answered 429 with retry-after `seconds`. */
  rateLimitNext(route: string, seconds: number): void;
  /** Destroys the polls in flight with no answer, as a network failure does. */
  dropConnections(): void;
  /** Forgets every queue, as the server's garbage collection of idle queues does (the next poll: BAD_EVENT_QUEUE_ID). */
  expireQueues(): void;
  stop(): Promise<void>;
}

interface Queue {
  id: string;
  events: Array<{ id: number; type: string; message?: ZulipMessageRecord; flags?: string[] }>;
  nextId: number;
}

interface User {
  id: number;
  email: string;
  full_name: string;
}

const fail = (res: http.ServerResponse, status: number, code: string, msg: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  sendJson(res, status, { result: 'error', msg, code, ...extra }, headers);

export async function startZulipFake(options: ZulipFakeOptions = {}): Promise<ZulipFake> {
  const botEmail = options.botEmail ?? 'talon-bot@zulip.fake.test';
  const botName = options.botName ?? 'Talon Bot';
  const apiKey = randomBytes(16).toString('hex');
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const users = new Map<string, User>();
  const streams = new Map<string, number>();
  const messages: ZulipMessageRecord[] = [];
  const queues = new Map<string, Queue>();
  const files = new Map<string, { type: string; name: string; data: Buffer }>();
  const temporary = new Map<string, string>();
  const rateLimits: Array<{ route: string; seconds: number }> = [];
  const waiters = new Set<() => void>();
  const polls = new Set<http.ServerResponse>();
  let nextMessageId = 100;

  const userOf = (email: string): User => {
    let u = users.get(email);
    if (!u) users.set(email, (u = { id: users.size + 1, email, full_name: email === botEmail ? botName : email.split('@')[0]! }));
    return u;
  };
  const bot = userOf(botEmail);

  function deliver(m: Omit<ZulipMessageRecord, 'id' | 'timestamp' | 'flags'>, flags: string[]): ZulipMessageRecord {
    const record: ZulipMessageRecord = { ...m, id: ++nextMessageId, timestamp: Math.floor(Date.now() / 1000), flags };
    messages.push(record);
    for (const q of queues.values()) q.events.push({ id: q.nextId++, type: 'message', message: record, flags });
    for (const wake of [...waiters]) wake();
    return record;
  }

  const fake: Omit<ZulipFake, 'url' | 'stop'> = {
    botEmail,
    botName,
    botId: bot.id,
    apiKey,
    calls: [],
    sent: [],
    typings: [],
    uploads: [],
    registered: [],
    user: (email) => userOf(email).id,
    stream(name) {
      if (!streams.has(name)) streams.set(name, 10 + streams.size);
      return streams.get(name)!;
    },
    dm(from, content, also = []) {
      const sender = userOf(from);
      const recipients = [sender, bot, ...also.map(userOf)];
      return deliver(
        {
          sender_id: sender.id,
          sender_email: sender.email,
          sender_full_name: sender.full_name,
          type: 'private',
          display_recipient: recipients,
          subject: '',
          content,
        },
        [],
      ).id;
    },
    streamMessage(stream, topic, from, content, o = {}) {
      const sender = userOf(from);
      const text = o.mentioned ? `@**${botName}** ${content}` : content;
      return deliver(
        {
          sender_id: sender.id,
          sender_email: sender.email,
          sender_full_name: sender.full_name,
          type: 'stream',
          display_recipient: stream,
          stream_id: fake.stream(stream),
          subject: topic,
          content: text,
        },
        o.mentioned ? ['mentioned'] : [],
      ).id;
    },
    addUpload(data, type, name) {
      const path = `/user_uploads/2/${randomBytes(6).toString('hex')}/${encodeURIComponent(name)}`;
      files.set(path, { type, name, data });
      return path;
    },
    rateLimitNext(route, seconds) {
      rateLimits.push({ route, seconds });
    },
    dropConnections() {
      for (const res of polls) res.destroy();
      polls.clear();
    },
    expireQueues() {
      queues.clear();
      fake.dropConnections();
    },
  };

  const authorized = (req: http.IncomingMessage) => {
    const m = /^Basic (.+)$/.exec(String(req.headers.authorization ?? ''));
    return m ? Buffer.from(m[1]!, 'base64').toString('utf8') === `${botEmail}:${apiKey}` : false;
  };
  const json = (v: unknown) => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v);

  const server = await listen(async (req, res, url) => {
    const path = url.pathname;
    const method = req.method ?? 'GET';
    // The temporary URL of a file is its own credential (Zulip signs it): no auth.
    if (method === 'GET' && temporary.has(path)) {
      const file = files.get(temporary.get(path)!)!;
      res.writeHead(200, { 'content-type': file.type, 'content-length': file.data.length });
      return void res.end(file.data);
    }
    const params = await readParams(req, url);
    fake.calls.push({
      method,
      path,
      params: Object.fromEntries(Object.entries(params).filter(([, v]) => typeof v !== 'object' || Array.isArray(v))),
      at: Date.now(),
    });
    if (!path.startsWith('/api/v1/')) return fail(res, 404, 'BAD_REQUEST', 'Not Found');
    if (!authorized(req)) return fail(res, 401, 'UNAUTHORIZED', 'Invalid API key', {}, { 'www-authenticate': 'Basic realm="zulip"' });
    const limited = rateLimits.findIndex((r) => path.includes(r.route));
    if (limited >= 0) {
      const { seconds } = rateLimits.splice(limited, 1)[0]!;
      return fail(res, 429, 'RATE_LIMIT_HIT', 'API usage exceeded rate limit', { 'retry-after': seconds }, { 'retry-after': String(seconds) });
    }
    const route = `${method} ${path.slice('/api/v1'.length)}`;

    if (route === 'GET /users/me')
      return sendJson(res, 200, { result: 'success', msg: '', user_id: bot.id, email: bot.email, full_name: bot.full_name, is_bot: true });

    if (route === 'POST /register') {
      const types = json(params.event_types);
      if (!Array.isArray(types) || !types.includes('message')) return fail(res, 400, 'BAD_REQUEST', 'event_types must include message');
      const q: Queue = { id: `q-${randomBytes(6).toString('hex')}`, events: [], nextId: 0 };
      queues.set(q.id, q);
      fake.registered.push(q.id);
      return sendJson(res, 200, { result: 'success', msg: '', queue_id: q.id, last_event_id: -1, max_message_id: messages.at(-1)?.id ?? -1 });
    }

    if (route === 'GET /events') {
      const q = queues.get(String(params.queue_id));
      if (!q) return fail(res, 400, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${String(params.queue_id)}`, { queue_id: params.queue_id });
      const last = Number(params.last_event_id ?? -1);
      // Naming last_event_id acknowledges the events up to it: the server drops them.
      q.events = q.events.filter((e) => e.id > last);
      const answer = () => sendJson(res, 200, { result: 'success', msg: '', events: q.events.filter((e) => e.id > last), queue_id: q.id });
      if (q.events.length || params.dont_block === 'true') return answer();
      polls.add(res);
      await new Promise<void>((resolve) => {
        const done = () => {
          waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const wake = () => done();
        const timer = setTimeout(() => {
          q.events.push({ id: q.nextId++, type: 'heartbeat' });
          done();
        }, heartbeatMs);
        waiters.add(wake);
        res.on('close', done);
      });
      polls.delete(res);
      if (!res.destroyed && queues.has(q.id)) answer();
      return;
    }

    if (route === 'GET /messages') {
      const anchor = Number(params.anchor);
      const include = params.include_anchor !== 'false';
      const after = Number(params.num_after ?? 0);
      const page = messages.filter((m) => (include ? m.id >= anchor : m.id > anchor)).slice(0, after);
      const foundNewest = !page.length || page.at(-1)!.id === messages.at(-1)!.id;
      return sendJson(res, 200, { result: 'success', msg: '', messages: page, found_newest: foundNewest, found_anchor: messages.some((m) => m.id === anchor) });
    }

    if (route === 'POST /messages') {
      const content = String(params.content ?? '');
      if (!content.trim()) return fail(res, 400, 'BAD_REQUEST', 'Message must not be empty');
      if (content.length > 10_000) return fail(res, 400, 'BAD_REQUEST', 'Message too long');
      const base = { sender_id: bot.id, sender_email: bot.email, sender_full_name: bot.full_name, content };
      let record: ZulipMessageRecord;
      if (params.type === 'private' || params.type === 'direct') {
        const ids = json(params.to);
        if (!Array.isArray(ids) || !ids.every((i) => typeof i === 'number')) return fail(res, 400, 'BAD_REQUEST', 'Invalid user ID');
        const recipients = [bot, ...[...users.values()].filter((u) => ids.includes(u.id))];
        record = deliver({ ...base, type: 'private', display_recipient: recipients, subject: '' }, ['read']);
      } else if (params.type === 'stream' || params.type === 'channel') {
        const id = Number(params.to);
        const name = [...streams].find(([, sid]) => sid === id)?.[0];
        if (!name) return fail(res, 400, 'STREAM_DOES_NOT_EXIST', `Stream with ID '${String(params.to)}' does not exist`);
        const topic = String(params.topic ?? '');
        if (topic.length > 60) return fail(res, 400, 'BAD_REQUEST', 'Topic too long');
        record = deliver({ ...base, type: 'stream', display_recipient: name, stream_id: id, subject: topic }, ['read']);
      } else return fail(res, 400, 'BAD_REQUEST', 'Invalid message type');
      fake.sent.push(record);
      return sendJson(res, 200, { result: 'success', msg: '', id: record.id });
    }

    if (route === 'POST /typing') {
      const to = json(params.to);
      fake.typings.push({
        op: String(params.op),
        type: String(params.type ?? 'direct'),
        ...(Array.isArray(to) ? { to: to as number[] } : {}),
        ...(params.stream_id !== undefined ? { stream_id: Number(params.stream_id) } : {}),
        ...(params.topic !== undefined ? { topic: String(params.topic) } : {}),
      });
      return sendJson(res, 200, { result: 'success', msg: '' });
    }

    if (route === 'POST /user_uploads') {
      const file = Object.values(params).find((v): v is FakeFile => typeof v === 'object' && v !== null && 'content' in v);
      if (!file) return fail(res, 400, 'BAD_REQUEST', 'You must specify a file to upload');
      const uri = fake.addUpload(file.content, file.type, file.name);
      fake.uploads.push({ path: uri, name: file.name, type: file.type, data: file.content });
      return sendJson(res, 200, { result: 'success', msg: '', uri, url: uri, filename: file.name });
    }

    if (method === 'GET' && path.startsWith('/api/v1/user_uploads/')) {
      const filePath = path.slice('/api/v1'.length);
      if (!files.has(filePath)) return fail(res, 404, 'BAD_REQUEST', 'Invalid path');
      const temp = `/user_uploads/temporary/${randomBytes(8).toString('hex')}/${filePath.split('/').pop()}`;
      temporary.set(temp, filePath);
      return sendJson(res, 200, { result: 'success', msg: '', url: temp });
    }

    return fail(res, 404, 'BAD_REQUEST', `Invalid endpoint ${route}`);
  });

  return {
    ...fake,
    url: `http://127.0.0.1:${server.port}`,
    stop: () => {
      fake.dropConnections();
      return server.close();
    },
  };
}
