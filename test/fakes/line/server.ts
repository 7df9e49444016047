/**
 * A fake of the LINE Messaging API for the channel-line adapter, speaking LINE's wire protocol: the bot's info
 * (`GET /v2/bot/info`), the push API (`POST /v2/bot/message/push`, deduplicated by `X-Line-Retry-Key`: a key already
 * accepted answers 409 with `x-line-accepted-request-id` and sends nothing), the loading animation
 * (`POST /v2/bot/chat/loading/start`), message content (`GET /v2/bot/message/{id}/content`, api-data's path), the
 * channel access token checked on each call (401 as LINE words it), and 429 injection. Webhooks are POSTed the way
 * LINE posts them: `{destination, events}` signed with `X-Line-Signature` (base64 HMAC-SHA256 of the body with the
 * channel secret); with webhook redelivery on (LINE's opt-in setting), an event not answered 2xx is POSTed again with
 * `deliveryContext.isRedelivery = true` and the same webhookEventId.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { listen, readParams, sendJson, type RecordedCall } from '../http.ts';

export interface LineFakeOptions {
  /** LINE's "Use webhook redelivery" setting (default on); off, a failed delivery is lost as LINE loses it. */
  redelivery?: boolean;
  /** How long the fake waits before delivering an event again after a non-2xx or a failed request. */
  redeliveryMs?: number;
}

/** Where a message comes from, as LINE's webhook `source`. */
export type LineSource =
  { type: 'user'; userId: string } | { type: 'group'; groupId: string; userId: string } | { type: 'room'; roomId: string; userId: string };

/** A message event's `message` (text, or a file whose content the fake serves). */
export type LineMessageInput =
  | { type: 'text'; text: string; mentionSelf?: boolean; quotedMessageId?: string }
  | { type: 'image' | 'video' | 'audio'; content: Buffer; contentType: string }
  | { type: 'file'; fileName: string; content: Buffer; contentType: string };

export interface LinePush {
  to: string;
  messages: Array<Record<string, unknown>>;
  retryKey?: string;
  id: string;
}

export interface LineDelivery {
  webhookEventId: string;
  status: number;
  isRedelivery: boolean;
}

export interface LineFake {
  /** api_url and data_url for the adapter (the fake serves both hosts' paths). */
  apiRoot: string;
  token: string;
  channelSecret: string;
  /** The bot's own user id (the webhook's `destination`). */
  botUserId: string;
  /** Sets the webhook URL (the console's "Webhook URL"). */
  deliverTo(url: string): void;
  /** A message event from `source`: POSTed signed to the webhook; resolves with the event once queued. */
  injectMessage(source: LineSource, message: LineMessageInput): { webhookEventId: string; messageId: string };
  /** POSTs a raw body with the given signature (or LINE's own), for the adapter's refusal tests. */
  postRaw(body: string, signature?: string): Promise<Response>;
  pushes: LinePush[];
  deliveries: LineDelivery[];
  calls: RecordedCall[];
  /** The next call to `path` (e.g. /v2/bot/message/push) answers `status` (429: LINE's rate limit message). */
  failNext(path: string, status: number): void;
  /** How many loading animations a chat got. */
  loadings(chatId: string): number;
  stop(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_TEXT = 5000;

export async function startLineFake(options: LineFakeOptions = {}): Promise<LineFake> {
  const token = `line-token-${randomUUID()}`;
  const channelSecret = randomUUID().replace(/-/g, '');
  const botUserId = `U${randomUUID().replace(/-/g, '')}`;
  const redeliveryMs = options.redeliveryMs ?? 200;
  const pushes: LinePush[] = [];
  const deliveries: LineDelivery[] = [];
  const calls: RecordedCall[] = [];
  const contents = new Map<string, { data: Buffer; type: string }>();
  const accepted = new Map<string, LinePush>();
  const failures = new Map<string, number>();
  const queue: Array<{ event: Record<string, unknown>; redelivery: boolean }> = [];
  const stopped = new AbortController();
  let webhookUrl: string | undefined;
  let delivering = false;
  let nextId = 1000;

  const sign = (body: string) => createHmac('sha256', channelSecret).update(body).digest('base64');
  const post = (body: string, signature = sign(body)) =>
    fetch(webhookUrl!, { method: 'POST', headers: { 'content-type': 'application/json', 'x-line-signature': signature }, body, signal: stopped.signal });

  /** LINE's delivery: events in order, each until a 2xx (with redelivery on), waiting redeliveryMs after a failure. */
  const deliver = async () => {
    if (delivering || !webhookUrl) return;
    delivering = true;
    try {
      while (queue.length && !stopped.signal.aborted) {
        const item = queue[0]!;
        const event = { ...item.event, deliveryContext: { isRedelivery: item.redelivery } };
        const status = await post(JSON.stringify({ destination: botUserId, events: [event] })).then(
          async (res) => (await res.arrayBuffer(), res.status),
          () => 0,
        );
        deliveries.push({ webhookEventId: String(item.event.webhookEventId), status, isRedelivery: item.redelivery });
        if ((status >= 200 && status < 300) || options.redelivery === false) queue.shift();
        else {
          item.redelivery = true;
          await new Promise((r) => setTimeout(r, redeliveryMs));
        }
      }
    } finally {
      delivering = false;
    }
  };

  const messageOf = (id: string, input: LineMessageInput): Record<string, unknown> => {
    if (input.type === 'text') {
      const mention = input.mentionSelf
        ? { mention: { mentionees: [{ index: 0, length: 4, type: 'user', userId: botUserId, isSelf: true }] } }
        : { mention: { mentionees: [{ index: 0, length: 4, type: 'user', userId: 'Uother', isSelf: false }] } };
      return { id, type: 'text', quoteToken: `q-${id}`, text: input.mentionSelf ? `@bot ${input.text}` : input.text, ...mention };
    }
    contents.set(id, { data: input.content, type: input.contentType });
    const file = input.type === 'file' ? { fileName: input.fileName, fileSize: input.content.length } : { contentProvider: { type: 'line' } };
    return { id, type: input.type, quoteToken: `q-${id}`, ...file };
  };

  const api = await listen(async (req, res, url) => {
    const params = await readParams(req, url);
    calls.push({ method: `${req.method} ${url.pathname}`, params, at: Date.now() });
    if (req.headers.authorization !== `Bearer ${token}`)
      return sendJson(res, 401, { message: 'Authentication failed. Confirm that the access token in the authorization header is valid.' });
    const failure = failures.get(url.pathname);
    if (failure !== undefined) {
      failures.delete(url.pathname);
      return sendJson(res, failure, { message: failure === 429 ? 'The API rate limit has been exceeded. Try again later.' : 'An error occurred' });
    }
    const requestId = randomUUID();
    if (req.method === 'GET' && url.pathname === '/v2/bot/info')
      return sendJson(res, 200, { userId: botUserId, basicId: '@123abcde', displayName: 'Talon', chatMode: 'bot', markAsReadMode: 'auto' });
    const content = /^\/v2\/bot\/message\/([^/]+)\/content$/.exec(url.pathname);
    if (req.method === 'GET' && content) {
      const found = contents.get(content[1]!);
      if (!found) return sendJson(res, 404, { message: 'Not found' });
      res.writeHead(200, { 'content-type': found.type, 'content-length': found.data.length });
      return void res.end(found.data);
    }
    if (req.method === 'POST' && url.pathname === '/v2/bot/chat/loading/start') {
      const seconds = Number(params.loadingSeconds ?? 20);
      if (typeof params.chatId !== 'string' || !params.chatId.startsWith('U') || seconds % 5 !== 0 || seconds < 5 || seconds > 60)
        return sendJson(res, 400, { message: 'The request body has 1 error(s)', details: [{ message: 'invalid', property: 'chatId' }] });
      return sendJson(res, 202, {});
    }
    if (req.method === 'POST' && url.pathname === '/v2/bot/message/push') {
      const retryKey = req.headers['x-line-retry-key'];
      if (retryKey !== undefined && (typeof retryKey !== 'string' || !UUID.test(retryKey)))
        return sendJson(res, 400, { message: 'The retry key must be a UUID' });
      const before = typeof retryKey === 'string' ? accepted.get(retryKey) : undefined;
      if (before)
        return sendJson(
          res,
          409,
          { message: 'The retry key is already accepted', sentMessages: [{ id: before.id, quoteToken: `q-${before.id}` }] },
          { 'x-line-accepted-request-id': requestId },
        );
      const messages = params.messages as Array<Record<string, unknown>> | undefined;
      if (typeof params.to !== 'string' || !Array.isArray(messages) || !messages.length || messages.length > 5)
        return sendJson(res, 400, { message: 'The request body has 1 error(s)', details: [{ message: 'invalid', property: 'messages' }] });
      for (const m of messages)
        if (m.type === 'text' && (typeof m.text !== 'string' || !m.text || m.text.length > MAX_TEXT))
          return sendJson(res, 400, {
            message: 'The request body has 1 error(s)',
            details: [{ message: `Length must be between 1 and ${MAX_TEXT}`, property: 'messages[0].text' }],
          });
      const push: LinePush = { to: params.to, messages, ...(typeof retryKey === 'string' ? { retryKey } : {}), id: String(nextId++) };
      pushes.push(push);
      if (typeof retryKey === 'string') accepted.set(retryKey, push);
      return sendJson(res, 200, { sentMessages: [{ id: push.id, quoteToken: `q-${push.id}` }] }, { 'x-line-request-id': requestId });
    }
    return sendJson(res, 404, { message: 'Not found' });
  });

  return {
    apiRoot: `http://127.0.0.1:${api.port}`,
    token,
    channelSecret,
    botUserId,
    deliverTo(url) {
      webhookUrl = url;
      void deliver();
    },
    injectMessage(source, message) {
      const messageId = String(nextId++);
      const webhookEventId = `01${randomUUID().replace(/-/g, '').toUpperCase().slice(0, 24)}`;
      const event = {
        type: 'message',
        mode: 'active',
        timestamp: Date.now(),
        source,
        webhookEventId,
        replyToken: randomUUID().replace(/-/g, ''),
        message: messageOf(messageId, message),
      };
      queue.push({ event, redelivery: false });
      void deliver();
      return { webhookEventId, messageId };
    },
    postRaw: (body, signature) => post(body, signature),
    pushes,
    deliveries,
    calls,
    failNext(path, status) {
      failures.set(path, status);
    },
    loadings: (chatId) => calls.filter((c) => c.method === 'POST /v2/bot/chat/loading/start' && c.params.chatId === chatId).length,
    async stop() {
      stopped.abort();
      await api.close();
    },
  };
}
