/**
 * A fake Slack Web API and Socket Mode on 127.0.0.1. Web API: `POST /api/<method>` (WebClient's slackApiUrl is
 * `<root>/api/`), token as `Authorization: Bearer` or a `token` parameter, JSON or form bodies, HTTP 200 with
 * `{ok: false, error}` for API errors and 429 + Retry-After with `ratelimited`. Socket Mode: apps.connections.open (an
 * app-level xapp- token) hands out a WebSocket URL; the server says `hello`, sends `events_api` envelopes that the
 * client must ack by `envelope_id` (unacked ones come again with retry_attempt + 1), pings, and `disconnect` frames.
 * See test/fakes/README.md for what is faithful and what is not.
 */
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import { listen, readParams, sendJson, type RecordedCall } from '../http.ts';

export interface SlackFakeOptions {
  botToken?: string;
  appToken?: string;
  /** How long an envelope waits for its ack before it is sent again (Slack waits a few seconds). */
  ackTimeoutMs?: number;
  /** How many times an unacked envelope is sent again (Slack: 3). */
  maxRetries?: number;
  /** Interval of the server's WebSocket pings (Slack's client treats missing pings as a dead link). */
  pingIntervalMs?: number;
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
  /** Messages chat.postMessage created, as returned. */
  sent: Array<Record<string, unknown>>;
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
  const pending = new Map<string, { envelope: SlackEnvelope; timer: NodeJS.Timeout }>();
  let ts = Math.floor(Date.now() / 1000) * 1_000_000;
  const nextTs = () => {
    ts += 1;
    return `${Math.floor(ts / 1_000_000)}.${String(ts % 1_000_000).padStart(6, '0')}`;
  };

  const methods: Record<string, { token: 'bot' | 'app'; run(p: Record<string, unknown>): Record<string, unknown> }> = {
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
  const shareFile = (f: { name: string; mimetype: string; data: Buffer }) => {
    const id = `F${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`;
    const path = `/files-pri/${ids.team}-${id}/${encodeURIComponent(f.name)}`;
    files.set(path, { mimetype: f.mimetype, data: f.data });
    return {
      id,
      created: Math.floor(Date.now() / 1000),
      name: f.name,
      title: f.name,
      mimetype: f.mimetype,
      filetype: f.name.split('.').pop() ?? 'binary',
      user: ids.human,
      size: f.data.length,
      mode: 'hosted',
      is_external: false,
      url_private: `http://127.0.0.1:${http_.port}${path}`,
      url_private_download: `http://127.0.0.1:${http_.port}${path}?download=1`,
    };
  };
  const open = () => [...wss.clients].filter((ws) => ws.readyState === ws.OPEN);
  let turn = 0;
  const transmit = (envelope: SlackEnvelope) => {
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
        ...(input.files?.length ? { subtype: 'file_share', upload: false, files: input.files.map(shareFile) } : {}),
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
      for (const p of pending.values()) clearTimeout(p.timer);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await http_.close();
    },
  };
}
