/**
 * A fake signal-cli daemon (`signal-cli -a <number> daemon --http --receive-mode=manual`) speaking its HTTP API:
 * `POST /api/v1/rpc` (JSON-RPC 2.0; `application/json` or 415; methods `version`, `send` with recipient or groupId,
 * message and data-URI attachments, `sendTyping`, `getAttachment` → `{data}` base64; unknown methods -32601; a rate
 * limit as error -5 with the results' retryAfterSeconds), `GET /api/v1/events` (server-sent events: `event:receive`
 * with `{"envelope":…,"account":…}` data, a `:` keep-alive comment every keepAliveMs; an `account` it does not hold is
 * a 400) and `GET /api/v1/check`. As the real daemon in manual receive mode, nothing is received while no event stream
 * is open: messages wait (on Signal's servers) and come when a stream opens. With `token`, it stands for a reverse
 * proxy in front of the daemon that wants that bearer token (401 otherwise).
 */
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { listen, sendJson } from '../http.ts';

export interface SignalFakeOptions {
  number?: string;
  token?: string;
  keepAliveMs?: number;
}

export interface SignalSent {
  recipient?: string[];
  groupId?: string;
  message: string;
  attachments: Array<{ mediaType: string; name?: string; data: Buffer }>;
  timestamp: number;
}

export interface SignalFake {
  /** The api_url to configure. */
  url: string;
  number: string;
  token?: string;
  /** Every JSON-RPC request, in order. */
  calls: Array<{ method: string; params: Record<string, unknown>; at: number }>;
  sent: SignalSent[];
  typings: Array<{ recipient?: string[]; groupId?: string; stop: boolean }>;
  /** Event streams opened so far. */
  streams: number;
  /** A direct message from `from` (a number); returns the envelope timestamp. */
  dm(from: string, text: string, options?: { attachments?: Array<{ mediaType: string; name?: string; data: Buffer }> }): number;
  /** A group message; `mentionBot` puts a mention of the bot's number in it. */
  group(groupId: string, from: string, text: string, options?: { mentionBot?: boolean }): number;
  /** Delivers an envelope again, as after a reconnect of the daemon to Signal's servers. */
  redeliver(timestamp: number): void;
  /** The next `send` is refused with error -5 (rate limit) and retryAfterSeconds. */
  rateLimitNext(seconds: number): void;
  /** Destroys the open event streams, as a network failure does. */
  dropConnections(): void;
  stop(): Promise<void>;
}

export async function startSignalFake(options: SignalFakeOptions = {}): Promise<SignalFake> {
  const number = options.number ?? '+15550000001';
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const streams = new Set<http.ServerResponse>();
  const waiting: string[] = [];
  const envelopes = new Map<number, string>();
  const attachments = new Map<string, Buffer>();
  const rateLimits: number[] = [];
  let clock = Date.now();
  const uuidOf = (n: string) => `00000000-0000-4000-8000-${n.replace(/\D/g, '').padStart(12, '0').slice(-12)}`;

  const emit = (data: string) => {
    if (!streams.size) return void waiting.push(data);
    for (const res of streams) res.write(`event:receive\ndata:${data}\n\n`);
  };
  const envelope = (from: string, dataMessage: Record<string, unknown>) => {
    const timestamp = ++clock;
    const data = JSON.stringify({
      envelope: {
        source: from,
        sourceNumber: from,
        sourceUuid: uuidOf(from),
        sourceName: `Person ${from.slice(-4)}`,
        sourceDevice: 1,
        timestamp,
        dataMessage: { timestamp, ...dataMessage },
      },
      account: number,
    });
    envelopes.set(timestamp, data);
    emit(data);
    return timestamp;
  };

  const fake: Omit<SignalFake, 'url' | 'stop' | 'streams'> & { streams: number } = {
    number,
    ...(options.token ? { token: options.token } : {}),
    calls: [],
    sent: [],
    typings: [],
    streams: 0,
    dm(from, text, o = {}) {
      const list = (o.attachments ?? []).map((a) => {
        const id = `${randomBytes(8).toString('hex')}.bin`;
        attachments.set(id, a.data);
        return { contentType: a.mediaType, filename: a.name ?? null, id, size: a.data.length };
      });
      return envelope(from, { message: text || null, expiresInSeconds: 0, viewOnce: false, mentions: [], attachments: list, contacts: [] });
    },
    group(groupId, from, text, o = {}) {
      const mentions = o.mentionBot ? [{ name: number, number, uuid: uuidOf(number), start: 0, length: 1 }] : [];
      return envelope(from, {
        message: o.mentionBot ? `\uFFFC ${text}` : text,
        expiresInSeconds: 0,
        viewOnce: false,
        mentions,
        attachments: [],
        groupInfo: { groupId, groupName: 'a group', revision: 1, type: 'DELIVER' },
      });
    },
    redeliver(timestamp) {
      emit(envelopes.get(timestamp)!);
    },
    rateLimitNext(seconds) {
      rateLimits.push(seconds);
    },
    dropConnections() {
      for (const res of streams) res.destroy();
      streams.clear();
    },
  };

  const result = (res: http.ServerResponse, id: unknown, value: unknown) => sendJson(res, 200, { jsonrpc: '2.0', result: value, id });
  const error = (res: http.ServerResponse, id: unknown, code: number, message: string, data: unknown = null) =>
    sendJson(res, 200, { jsonrpc: '2.0', error: { code, message, data }, id });

  function rpc(res: http.ServerResponse, body: { id?: unknown; method?: unknown; params?: Record<string, unknown> }) {
    const { id } = body;
    const params = body.params ?? {};
    if (typeof body.method !== 'string') return error(res, null, -32600, 'method field must be set');
    fake.calls.push({ method: body.method, params, at: Date.now() });
    if (params.account !== undefined && params.account !== number) return error(res, id, -32602, 'Specified account does not match');
    const to = {
      ...(Array.isArray(params.recipient) ? { recipient: params.recipient as string[] } : {}),
      ...(typeof params.groupId === 'string' ? { groupId: params.groupId } : {}),
    };
    switch (body.method) {
      case 'version':
        return result(res, id, { version: '0.13.99-fake' });
      case 'send': {
        if (!to.recipient && !to.groupId) return error(res, id, -32602, 'No recipients given');
        const seconds = rateLimits.shift();
        const timestamp = ++clock;
        if (seconds !== undefined)
          return error(res, id, -5, 'Failed to send message due to rate limiting', {
            response: {
              timestamp,
              results: [{ recipientAddress: { number: to.recipient?.[0] ?? null }, type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: seconds }],
            },
          });
        const files: SignalSent['attachments'] = [];
        for (const a of (params.attachments as string[] | undefined) ?? []) {
          const m = /^data:([^;,]+)(?:;filename=([^;,]*))?;base64,(.*)$/s.exec(a);
          if (!m) return error(res, id, -1, `Failed to read attachment: ${a.slice(0, 40)}`);
          files.push({ mediaType: m[1]!, ...(m[2] ? { name: m[2] } : {}), data: Buffer.from(m[3]!, 'base64') });
        }
        fake.sent.push({ ...to, message: String(params.message ?? ''), attachments: files, timestamp });
        return result(res, id, { timestamp, results: [{ type: 'SUCCESS' }] });
      }
      case 'sendTyping':
        fake.typings.push({ ...to, stop: params.stop === true });
        return result(res, id, {});
      case 'getAttachment': {
        const data = attachments.get(String(params.id));
        if (!data) return error(res, id, -1, 'Attachment file not found');
        return result(res, id, { data: data.toString('base64') });
      }
      default:
        return error(res, id, -32601, 'Method not implemented');
    }
  }

  const server = await listen(async (req, res, url) => {
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) return sendJson(res, 401, { error: 'unauthorized' });
    if (url.pathname === '/api/v1/check') return void res.writeHead(200).end();
    if (url.pathname === '/api/v1/rpc') {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return void res.writeHead(415).end();
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      let body: Parameters<typeof rpc>[1];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return error(res, null, -32700, 'Parse error');
      }
      return rpc(res, body);
    }
    if (url.pathname === '/api/v1/events') {
      if (req.method !== 'GET') return void res.writeHead(405).end();
      const account = url.searchParams.get('account');
      if (account && account !== number) return void res.writeHead(400).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      streams.add(res);
      fake.streams++;
      for (const data of waiting.splice(0)) res.write(`event:receive\ndata:${data}\n\n`);
      const timer = setInterval(() => res.write(':\n'), keepAliveMs);
      res.on('close', () => {
        clearInterval(timer);
        streams.delete(res);
      });
      return;
    }
    res.writeHead(404).end();
  });

  return Object.assign(fake, {
    url: `http://127.0.0.1:${server.port}`,
    stop: () => {
      fake.dropConnections();
      return server.close();
    },
  }) as SignalFake;
}
