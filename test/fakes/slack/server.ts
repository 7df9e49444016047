/**
 * A fake Slack Web API and Socket Mode on 127.0.0.1. Web API: `POST /api/<method>` (WebClient's slackApiUrl is
 * `<root>/api/`), token as `Authorization: Bearer` or a `token` parameter, JSON or form bodies, HTTP 200 with
 * `{ok: false, error}` for API errors and 429 + Retry-After with `ratelimited`. Socket Mode: apps.connections.open (an
 * app-level xapp- token) hands out a WebSocket URL; the server says `hello`, sends `events_api` envelopes that the
 * client must ack by `envelope_id` (unacked ones come again with retry_attempt + 1), pings, and `disconnect` frames.
 * Files: the upload flow (files.getUploadURLExternal → the bytes POSTed to the upload_url on this server →
 * files.completeUploadExternal sharing them into a channel or thread), and shared files served at url_private to the
 * bot token. HTTP mode (`deliverTo`): events POSTed to a Request URL, signed with the signing secret as Slack signs
 * them (v0 HMAC-SHA256), sent again with X-Slack-Retry-Num until a 2xx comes back; the url_verification handshake.
 * See test/fakes/README.md for what is faithful and what is not.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import { listen, readParams, sendJson, type FakeFile, type RecordedCall } from '../http.ts';

export interface SlackFakeOptions {
  botToken?: string;
  appToken?: string;
  /** How long an envelope waits for its ack before it is sent again (Slack waits a few seconds). */
  ackTimeoutMs?: number;
  /** How many times an unacked envelope is sent again (Slack: 3). */
  maxRetries?: number;
  /** Interval of the server's WebSocket pings (Slack's client treats missing pings as a dead link). */
  pingIntervalMs?: number;
  /** The app's signing secret, for HTTP-mode deliveries. */
  signingSecret?: string;
}

/** A file the bot uploaded and shared (files.completeUploadExternal with a channel_id). */
export interface SlackUpload {
  id: string;
  channel: string;
  thread_ts?: string;
  name: string;
  mimetype: string;
  data: Buffer;
}

export interface InboundSlackMessage {
  channel: string;
  text: string;
  user?: string;
  /** 'im' for a direct message, 'channel' otherwise. */
  channel_type?: 'im' | 'channel' | 'group' | 'mpim';
  thread_ts?: string;
  /** 'app_mention' when the bot is @-mentioned in a channel; 'message' otherwise. */
  type?: 'message' | 'app_mention';
  /**
   * The message's ts (a new one unless given). An app subscribed to both `app_mention` and `message.channels` gets
   * one mention as two envelopes (two event_ids) carrying the same ts: inject both with one ts to stage that.
   */
  ts?: string;
  /** Files the user shares with the message: a `file_share` message whose files are served at their url_private. */
  files?: Array<{ name: string; mimetype: string; data: Buffer }>;
}

export interface SlackEnvelope {
  envelope_id: string;
  type: 'events_api';
  payload: Record<string, unknown>;
  accepts_response_payload: boolean;
  retry_attempt: number;
  retry_reason: string;
}

export interface SlackFake {
  /** For WebClient's / Bolt's `slackApiUrl` (ends in /api/). */
  apiUrl: string;
  botToken: string;
  appToken: string;
  botUserId: string;
  /** Web API calls (`chat.postMessage`) and Socket Mode frames received (`socket ack`), in order. */
  calls: RecordedCall[];
  /** Messages chat.postMessage created, as returned, and the messages completed uploads shared (with `files`). */
  sent: Array<Record<string, unknown>>;
  /** Files uploaded and shared into a channel, in order. */
  uploads: SlackUpload[];
  signingSecret: string;
  /**
   * HTTP mode: from now on events are POSTed to `url` (signed) instead of sent over a socket; an answer other than
   * 2xx, or none within ackTimeoutMs, makes the fake send it again with X-Slack-Retry-Num (at most maxRetries times).
   */
  deliverTo(url: string): void;
  /** Sends Slack's url_verification request to the delivery URL; resolves with the status and the answer's body. */
  verifyUrl(challenge: string): Promise<{ status: number; body: unknown }>;
  /** The signature headers Slack sends with `body` at `nowMs`. */
  signedHeaders(body: string, nowMs?: number): Record<string, string>;
  /** Sends an events_api envelope (a `message` or `app_mention` event) to one open socket; answers it. */
  injectMessage(message: InboundSlackMessage): SlackEnvelope;
  /** Envelopes sent and not acked yet. */
  unacked(): SlackEnvelope[];
  /** Sends a `disconnect` frame (refresh_requested by default) to every socket, closing them after `closeAfterMs`. */
  disconnectAll(reason?: 'refresh_requested' | 'warning' | 'link_disabled', closeAfterMs?: number): void;
  /** Closes every socket abnormally, as a network drop. */
  dropConnections(): void;
  /** The next call of `method` answers 429 with Retry-After. */
  rateLimitNext(method: string, retryAfterSeconds: number): void;
  openSockets(): number;
  stop(): Promise<void>;
}

/** Slack allows at most 10 Socket Mode connections per app; the 11th is told too_many_websockets. */
const MAX_CONNECTIONS = 10;

export async function startSlackFake(options: SlackFakeOptions = {}): Promise<SlackFake> {
  const botToken = options.botToken ?? 'xoxb-talon-test';
  const appToken = options.appToken ?? 'xapp-1-talon-test';
  const ackTimeout = options.ackTimeoutMs ?? 2_000;
  const maxRetries = options.maxRetries ?? 3;
  const ids = { team: 'T0TALON', botUser: 'U0TALONBOT', bot: 'B0TALON', app: 'A0TALON', human: 'U0ALICE' };
  const calls: RecordedCall[] = [];
  const sent: Array<Record<string, unknown>> = [];
  const limits = new Map<string, number>();
  const tickets = new Set<string>();
  /** Bytes of the files users shared, by url_private path (Slack serves them to a token of the workspace). */
  const files = new Map<string, { mimetype: string; data: Buffer }>();
  const signingSecret = options.signingSecret ?? 'talon-test-signing-secret';
  const uploads: SlackUpload[] = [];
  /** Uploads announced by files.getUploadURLExternal, by file id; `data` once the bytes were POSTed. */
  const announced = new Map<string, { filename: string; length: number; data?: Buffer }>();
  let deliveryUrl: string | undefined;
  const inFlight = new AbortController();
  const pending = new Map<string, { envelope: SlackEnvelope; timer: NodeJS.Timeout }>();
  let ts = Math.floor(Date.now() / 1000) * 1_000_000;
  const nextTs = () => {
    ts += 1;
    return `${Math.floor(ts / 1_000_000)}.${String(ts % 1_000_000).padStart(6, '0')}`;
  };

  const methods: Record<string, { token: 'bot' | 'app'; run(p: Record<string, unknown>): Record<string, unknown> }> = {
    'files.getUploadURLExternal': {
      token: 'bot',
      run: (p) => {
        const length = Number(p.length);
        if (typeof p.filename !== 'string' || !p.filename || !Number.isSafeInteger(length) || length < 1) return { ok: false, error: 'invalid_arguments' };
        const id = `F${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`;
        announced.set(id, { filename: p.filename, length });
        return { upload_url: `http://127.0.0.1:${http_.port}/upload/v1/${id}`, file_id: id };
      },
    },
    'files.completeUploadExternal': {
      token: 'bot',
      run: (p) => {
        const list = (typeof p.files === 'string' ? JSON.parse(p.files) : p.files) as Array<{ id: string; title?: string }> | undefined;
        if (!Array.isArray(list) || !list.length) return { ok: false, error: 'invalid_arguments' };
        const done = list.map((f) => ({ f, upload: announced.get(f.id) }));
        // Slack refuses to complete a file whose bytes never arrived (or arrived short).
        if (done.some(({ upload }) => !upload?.data || upload.data.length !== upload.length)) return { ok: false, error: 'upload_not_found' };
        const channel = typeof p.channel_id === 'string' ? p.channel_id : undefined;
        const thread = typeof p.thread_ts === 'string' ? p.thread_ts : undefined;
        const shared = done.map(({ f, upload }) => {
          announced.delete(f.id);
          const mimetype = mimeOf(upload!.filename);
          if (channel) uploads.push({ id: f.id, channel, ...(thread ? { thread_ts: thread } : {}), name: upload!.filename, mimetype, data: upload!.data! });
          return { ...shareFile({ name: upload!.filename, mimetype, data: upload!.data! }, f.id, ids.botUser), title: f.title ?? upload!.filename };
        });
        if (channel) {
          const ts = nextTs();
          sent.push({
            channel,
            type: 'message',
            subtype: 'file_share',
            user: ids.botUser,
            bot_id: ids.bot,
            text: typeof p.initial_comment === 'string' ? p.initial_comment : '',
            ts,
            files: shared,
            ...(thread ? { thread_ts: thread } : {}),
          });
        }
        return { files: shared };
      },
    },
    'auth.test': {
      token: 'bot',
      run: () => ({
        url: 'https://talon-test.slack.com/',
        team: 'Talon Test',
        user: 'talon',
        team_id: ids.team,
        user_id: ids.botUser,
        bot_id: ids.bot,
        is_enterprise_install: false,
      }),
    },
    'apps.connections.open': {
      token: 'app',
      run: () => {
        const ticket = randomUUID();
        tickets.add(ticket);
        return { url: `${wsRoot}/link/?ticket=${ticket}&app_id=${ids.app}` };
      },
    },
    'chat.postMessage': {
      token: 'bot',
      run: (p) => {
        if (!p.channel) return { ok: false, error: 'channel_not_found' };
        const text = typeof p.text === 'string' ? p.text : '';
        if (!text && !p.blocks && !p.attachments) return { ok: false, error: 'no_text' };
        if (text.length > 40_000) return { ok: false, error: 'msg_too_long' };
        const message = {
          type: 'message',
          user: ids.botUser,
          bot_id: ids.bot,
          app_id: ids.app,
          text,
          ts: nextTs(),
          team: ids.team,
          ...(p.thread_ts ? { thread_ts: String(p.thread_ts) } : {}),
          ...(p.blocks ? { blocks: typeof p.blocks === 'string' ? JSON.parse(p.blocks) : p.blocks } : {}),
        };
        sent.push({ channel: p.channel, ...message });
        return { channel: p.channel, ts: message.ts, message };
      },
    },
  };

  const http_ = await listen(async (req, res, url) => {
    const upload = /^\/upload\/v1\/(F[A-Z0-9]+)$/.exec(url.pathname);
    if (upload && req.method === 'POST') {
      // The upload URL takes the bytes raw or as a multipart form's one file part (the WebClient sends the latter).
      const entry = announced.get(upload[1]!);
      const type = String(req.headers['content-type'] ?? '');
      const params = type.startsWith('multipart/form-data') ? await readParams(req, url) : undefined;
      const part = params && Object.values(params).find((v): v is FakeFile => typeof v === 'object' && v !== null && 'content' in v);
      const data = part ? part.content : params ? undefined : await readRaw(req);
      calls.push({ method: 'file upload', params: { file_id: upload[1], bytes: data?.length ?? 0 }, at: Date.now() });
      if (!entry || !data) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      entry.data = data;
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${data.length}`);
    }
    const file = files.get(url.pathname);
    if (file) {
      const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      calls.push({ method: 'file download', params: { path: url.pathname }, at: Date.now() });
      // Without the token Slack answers its sign-in page, not the file.
      if (bearer !== botToken) return void res.writeHead(302, { location: 'https://slack.com/signin' }).end();
      return void res.writeHead(200, { 'content-type': file.mimetype, 'content-length': file.data.length }).end(file.data);
    }
    const m = /^\/api\/([A-Za-z.]+)$/.exec(url.pathname);
    const params = await readParams(req, url);
    if (!m) return sendJson(res, 404, { ok: false, error: 'unknown_method' });
    const method = m[1]!;
    calls.push({ method, params, at: Date.now() });
    const retry = limits.get(method);
    if (retry !== undefined) {
      limits.delete(method);
      return sendJson(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(retry) });
    }
    const spec = methods[method];
    if (!spec) return sendJson(res, 200, { ok: false, error: 'unknown_method' });
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const given = bearer ?? (typeof params.token === 'string' ? params.token : undefined);
    if (!given) return sendJson(res, 200, { ok: false, error: 'not_authed' });
    const expected = spec.token === 'bot' ? botToken : appToken;
    if (given !== expected) {
      const otherKind = given === botToken || given === appToken;
      return sendJson(res, 200, { ok: false, error: otherKind ? 'not_allowed_token_type' : 'invalid_auth' });
    }
    const result = spec.run(params);
    sendJson(res, 200, 'ok' in result ? result : { ok: true, ...result });
  });
  const wsRoot = `ws://127.0.0.1:${http_.port}`;
  const wss = new WebSocketServer({ noServer: true });
  http_.server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const ticket = url.searchParams.get('ticket') ?? '';
    // A ticket is good for one connection, as Slack's are.
    if (url.pathname !== '/link/' || !tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws));
  });

  /** A shared file as the event's `files` carries it (Slack's file object, the fields a client reads). */
  const shareFile = (
    f: { name: string; mimetype: string; data: Buffer },
    id = `F${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`,
    user = ids.human,
  ) => {
    const path = `/files-pri/${ids.team}-${id}/${encodeURIComponent(f.name)}`;
    files.set(path, { mimetype: f.mimetype, data: f.data });
    return {
      id,
      created: Math.floor(Date.now() / 1000),
      name: f.name,
      title: f.name,
      mimetype: f.mimetype,
      filetype: f.name.split('.').pop() ?? 'binary',
      user,
      size: f.data.length,
      mode: 'hosted',
      is_external: false,
      url_private: `http://127.0.0.1:${http_.port}${path}`,
      url_private_download: `http://127.0.0.1:${http_.port}${path}?download=1`,
    };
  };
  const open = () => [...wss.clients].filter((ws) => ws.readyState === ws.OPEN);
  let turn = 0;
  const sign = (body: string, nowMs = Date.now()) => {
    const timestamp = String(Math.floor(nowMs / 1000));
    const signature = createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex');
    return { 'X-Slack-Request-Timestamp': timestamp, 'X-Slack-Signature': `v0=${signature}` };
  };
  /** HTTP mode: one POST of the event; a non-2xx or no answer in time schedules the next attempt. */
  const post = async (envelope: SlackEnvelope, url: string) => {
    const body = JSON.stringify(envelope.payload);
    const retry: Record<string, string> = envelope.retry_attempt
      ? { 'X-Slack-Retry-Num': String(envelope.retry_attempt), 'X-Slack-Retry-Reason': envelope.retry_reason }
      : {};
    const again = (reason: string) => {
      pending.delete(envelope.envelope_id);
      if (envelope.retry_attempt >= maxRetries || inFlight.signal.aborted) return;
      const next = { ...envelope, retry_attempt: envelope.retry_attempt + 1, retry_reason: reason };
      pending.set(envelope.envelope_id, { envelope: next, timer: setTimeout(() => void post(next, url), ackTimeout) });
    };
    pending.set(envelope.envelope_id, { envelope, timer: setTimeout(() => undefined, 0) });
    let status = 0;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...sign(body), ...retry },
        body,
        signal: AbortSignal.any([inFlight.signal, AbortSignal.timeout(ackTimeout)]),
      });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = 0;
    }
    calls.push({ method: 'http delivery', params: { event_id: envelope.payload.event_id, retry_num: envelope.retry_attempt, status }, at: Date.now() });
    if (status >= 200 && status < 300) pending.delete(envelope.envelope_id);
    else again(status ? 'http_error' : 'http_timeout');
  };
  const transmit = (envelope: SlackEnvelope) => {
    if (deliveryUrl) return void post(envelope, deliveryUrl);
    const sockets = open();
    // Slack sends each envelope over one of the app's connections; round robin here.
    const ws = sockets[turn++ % Math.max(sockets.length, 1)];
    ws?.send(JSON.stringify(envelope));
    const timer = setTimeout(() => {
      pending.delete(envelope.envelope_id);
      if (envelope.retry_attempt >= maxRetries) return;
      const again = { ...envelope, retry_attempt: envelope.retry_attempt + 1, retry_reason: 'timeout' };
      transmit(again);
    }, ackTimeout);
    pending.set(envelope.envelope_id, { envelope, timer });
  };

  wss.on('connection', (ws: WebSocket) => {
    if (open().length > MAX_CONNECTIONS) {
      ws.send(JSON.stringify({ type: 'disconnect', reason: 'too_many_websockets', debug_info: { host: 'fake' } }));
      ws.close();
      return;
    }
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: open().length,
        debug_info: { host: 'fake', approximate_connection_time: 18060 },
        connection_info: { app_id: ids.app },
      }),
    );
    const ping = setInterval(() => ws.ping(), options.pingIntervalMs ?? 5_000);
    ws.on('close', () => clearInterval(ping));
    ws.on('message', (raw) => {
      let frame: { envelope_id?: unknown; payload?: unknown };
      try {
        frame = JSON.parse(String(raw)) as typeof frame;
      } catch {
        return;
      }
      calls.push({ method: 'socket ack', params: frame as Record<string, unknown>, at: Date.now() });
      const entry = typeof frame.envelope_id === 'string' ? pending.get(frame.envelope_id) : undefined;
      if (entry) {
        clearTimeout(entry.timer);
        pending.delete(frame.envelope_id as string);
      }
    });
  });

  return {
    apiUrl: `http://127.0.0.1:${http_.port}/api/`,
    botToken,
    appToken,
    botUserId: ids.botUser,
    calls,
    sent,
    uploads,
    signingSecret,
    deliverTo(url) {
      deliveryUrl = url;
    },
    async verifyUrl(challenge) {
      if (!deliveryUrl) throw new Error('no delivery URL: call deliverTo first');
      const body = JSON.stringify({ token: 'verification-token', challenge, type: 'url_verification' });
      const res = await fetch(deliveryUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...sign(body) }, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // a plain-text answer (Slack takes the challenge as text too)
      }
      return { status: res.status, body: parsed };
    },
    signedHeaders: (body, nowMs) => sign(body, nowMs),
    injectMessage(input) {
      const eventTs = input.ts ?? nextTs();
      const type = input.type ?? 'message';
      const event = {
        type,
        user: input.user ?? ids.human,
        text: input.text,
        ts: eventTs,
        channel: input.channel,
        // Slack's app_mention events carry no channel_type; message events do.
        ...(type === 'message' ? { channel_type: input.channel_type ?? (input.channel.startsWith('D') ? 'im' : 'channel') } : {}),
        event_ts: eventTs,
        team: ids.team,
        ...(input.thread_ts ? { thread_ts: input.thread_ts } : {}),
        ...(input.files?.length ? { subtype: 'file_share', upload: false, files: input.files.map((f) => shareFile(f)) } : {}),
      };
      const envelope: SlackEnvelope = {
        envelope_id: randomUUID(),
        type: 'events_api',
        payload: {
          token: 'verification-token',
          team_id: ids.team,
          api_app_id: ids.app,
          event,
          type: 'event_callback',
          event_id: `Ev${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`,
          event_time: Math.floor(Date.now() / 1000),
          authorizations: [{ team_id: ids.team, user_id: ids.botUser, is_bot: true, is_enterprise_install: false }],
          is_ext_shared_channel: false,
        },
        accepts_response_payload: false,
        retry_attempt: 0,
        retry_reason: '',
      };
      transmit(envelope);
      return envelope;
    },
    unacked: () => [...pending.values()].map((p) => p.envelope),
    disconnectAll(reason = 'refresh_requested', closeAfterMs = 1_000) {
      for (const ws of open()) {
        ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'fake' } }));
        setTimeout(() => ws.close(), closeAfterMs).unref();
      }
    },
    dropConnections() {
      for (const ws of wss.clients) ws.terminate();
    },
    rateLimitNext(method, retryAfter) {
      limits.set(method, retryAfter);
    },
    openSockets: () => open().length,
    async stop() {
      inFlight.abort();
      for (const p of pending.values()) clearTimeout(p.timer);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await http_.close();
    },
  };
}

/** The type Slack gives an uploaded file, from its name (the few kinds the tests upload; Slack knows many more). */
function mimeOf(filename: string): string {
  const ext = filename.split('.').pop()?.toLowerCase() ?? '';
  return (
    ({ png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', txt: 'text/plain', pdf: 'application/pdf' } as Record<string, string>)[ext] ??
    'application/octet-stream'
  );
}

async function readRaw(req: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
