/**
 * A fake ntfy server (https://docs.ntfy.sh) speaking its real wire protocol on 127.0.0.1: publishing by
 * `POST|PUT /<topic>` (the body is the message; `Title`, `Tags` and their `X-` forms as headers), answered with the
 * message as JSON; subscribing by `GET /<topic>[,<topic>…]/json` — a newline-delimited JSON stream that starts with an
 * `open` event, then the cached messages after `since` (an id, a unix time, `all` or `latest`; none: only new ones),
 * then each new message as it is published, with a `keepalive` event every keepaliveMs — or with `poll=1` the cached
 * ones and the end. Access tokens as ntfy checks them (`Authorization: Bearer`, 401 `{code: 40101, …}`). A test
 * publishes as a person (`publish`), reads what was published (`messages`), cuts the streams (`dropConnections`),
 * makes the next publish answer 429 (`failNextPublish`), and sees every request (`calls`).
 */
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { listen, nowSeconds, sendJson, type RecordedCall } from '../http.ts';

export interface NtfyMessage {
  id: string;
  time: number;
  expires: number;
  event: 'message';
  topic: string;
  message: string;
  title?: string;
  tags?: string[];
}

export interface NtfyFakeOptions {
  /** The access token every request must carry; none: anonymous access. */
  token?: string;
  /** How often a subscription gets a keepalive event (ntfy's default is 45 s). */
  keepaliveMs?: number;
}

export interface NtfyFake {
  url: string;
  token: string | undefined;
  /** A person publishes to the topic (no token check: the test is the server's other client). */
  publish(topic: string, message: string, extra?: { title?: string; tags?: string[] }): NtfyMessage;
  /** Every message of the topic, oldest first (the people's and the bot's). */
  messages(topic: string): NtfyMessage[];
  /** Ends every open subscription stream; returns how many were cut. */
  dropConnections(): number;
  /** The next publish is answered 429 (ntfy's `limit reached`), with `Retry-After` seconds when given. */
  failNextPublish(status: number, retryAfterSeconds?: number): void;
  /** Every request: `subscribe` (params: topics, since, poll) and `publish` (params: topic, message, tags). */
  calls: RecordedCall[];
  /** Open subscription streams now. */
  subscribers(): number;
  stop(): Promise<void>;
}

const TOPIC = /^[-_A-Za-z0-9]{1,64}$/;
/** ntfy's ids: 12 characters of [A-Za-z0-9]. */
const messageId = () => Array.from(randomBytes(12), (b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[b % 62]).join('');
const CACHE_SECONDS = 12 * 3600;

interface Subscriber {
  topics: Set<string>;
  res: http.ServerResponse;
}

export async function startNtfyFake(options: NtfyFakeOptions = {}): Promise<NtfyFake> {
  const cache: NtfyMessage[] = [];
  const subscribers = new Set<Subscriber>();
  const calls: RecordedCall[] = [];
  let failNext: { status: number; retryAfter?: number } | undefined;
  const keepaliveMs = options.keepaliveMs ?? 45_000;

  const line = (res: http.ServerResponse, event: object) => res.write(`${JSON.stringify(event)}\n`);
  const store = (topic: string, message: string, extra: { title?: string; tags?: string[] } = {}): NtfyMessage => {
    const time = nowSeconds();
    const m: NtfyMessage = {
      id: messageId(),
      time,
      expires: time + CACHE_SECONDS,
      event: 'message',
      topic,
      message,
      ...(extra.title ? { title: extra.title } : {}),
      ...(extra.tags?.length ? { tags: extra.tags } : {}),
    };
    cache.push(m);
    for (const s of subscribers) if (s.topics.has(topic)) line(s.res, m);
    return m;
  };
  /** The cached messages `since` selects, as ntfy's message cache does. */
  const since = (topics: Set<string>, value: string | null): NtfyMessage[] => {
    const mine = cache.filter((m) => topics.has(m.topic));
    if (value === null || value === '') return [];
    if (value === 'all') return mine;
    if (value === 'latest') return mine.slice(-1);
    if (/^\d+$/.test(value)) return mine.filter((m) => m.time >= Number(value));
    const at = mine.findIndex((m) => m.id === value);
    return at < 0 ? mine : mine.slice(at + 1);
  };
  const authorized = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!options.token || req.headers.authorization === `Bearer ${options.token}`) return true;
    sendJson(res, 401, { code: 40101, http: 401, error: 'unauthorized', link: 'https://ntfy.sh/docs/publish/#authentication' });
    return false;
  };
  const header = (req: http.IncomingMessage, ...names: string[]) => {
    for (const n of names) {
      const v = req.headers[n];
      if (typeof v === 'string') return v;
    }
    return undefined;
  };

  const { port, close } = await listen(async (req, res, url) => {
    const parts = url.pathname.split('/').filter(Boolean);
    if (req.method === 'GET' && parts.length === 2 && parts[1] === 'json') {
      const topics = new Set(parts[0]!.split(','));
      calls.push({
        method: 'subscribe',
        params: { topics: [...topics], since: url.searchParams.get('since'), poll: url.searchParams.get('poll') },
        at: Date.now(),
      });
      if (![...topics].every((t) => TOPIC.test(t))) return sendJson(res, 400, { code: 40009, http: 400, error: 'invalid topic' });
      if (!authorized(req, res)) return;
      res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'access-control-allow-origin': '*' });
      const backlog = since(topics, url.searchParams.get('since'));
      if (url.searchParams.get('poll') === '1') {
        for (const m of backlog) line(res, m);
        return void res.end();
      }
      line(res, { id: messageId(), time: nowSeconds(), event: 'open', topic: [...topics].join(',') });
      for (const m of backlog) line(res, m);
      const sub: Subscriber = { topics, res };
      subscribers.add(sub);
      const timer = setInterval(() => line(res, { id: messageId(), time: nowSeconds(), event: 'keepalive', topic: [...topics].join(',') }), keepaliveMs);
      res.on('close', () => {
        clearInterval(timer);
        subscribers.delete(sub);
      });
      return;
    }
    if ((req.method === 'POST' || req.method === 'PUT') && parts.length === 1 && TOPIC.test(parts[0]!)) {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const message = Buffer.concat(chunks).toString('utf8');
      const tags = (header(req, 'x-tags', 'tags', 'tag', 'ta') ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const title = header(req, 'x-title', 'title', 't');
      calls.push({ method: 'publish', params: { topic: parts[0], message, tags, ...(title ? { title } : {}) }, at: Date.now() });
      if (!authorized(req, res)) return;
      if (failNext) {
        const { status, retryAfter } = failNext;
        failNext = undefined;
        return sendJson(
          res,
          status,
          { code: status * 100 + 1, http: status, error: 'limit reached: too many requests' },
          retryAfter ? { 'retry-after': String(retryAfter) } : {},
        );
      }
      if (Buffer.byteLength(message) > 4096) return sendJson(res, 413, { code: 41301, http: 413, error: 'message too large' });
      return sendJson(res, 200, store(parts[0]!, message, { ...(title ? { title } : {}), tags }));
    }
    sendJson(res, 404, { code: 40401, http: 404, error: 'page not found' });
  });

  return {
    url: `http://127.0.0.1:${port}`,
    token: options.token,
    publish: (topic, message, extra) => store(topic, message, extra),
    messages: (topic) => cache.filter((m) => m.topic === topic),
    dropConnections() {
      const n = subscribers.size;
      for (const s of subscribers) s.res.destroy();
      subscribers.clear();
      return n;
    },
    failNextPublish(status, retryAfterSeconds) {
      failNext = { status, ...(retryAfterSeconds !== undefined ? { retryAfter: retryAfterSeconds } : {}) };
    },
    calls,
    subscribers: () => subscribers.size,
    stop: async () => {
      for (const s of subscribers) s.res.destroy();
      await close();
    },
  };
}
