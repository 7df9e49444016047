/**
 * A fake Telegram Bot API (core.telegram.org/bots/api) on 127.0.0.1, for a real client (grammY with
 * `client.apiRoot`) to talk to: `POST|GET /bot<token>/<method>` with query, JSON, form or multipart parameters, answers
 * `{ok: true, result}` or `{ok: false, error_code, description, parameters?}` with the HTTP status of error_code, and
 * file downloads at `/file/bot<token>/<file_path>`. With a webhook set (setWebhook) updates are POSTed to its URL
 * instead, with the `X-Telegram-Bot-Api-Secret-Token` header, until a 2xx answers each; getUpdates is then a 409.
 * See test/fakes/README.md for what is faithful and what is not.
 */
import type http from 'node:http';
import { listen, nowSeconds, readParams, sendJson, type FakeFile, type RecordedCall } from '../http.ts';
import { parseTelegramHtml } from './html.ts';

export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}
export interface TelegramChat {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
  username?: string;
}
/** A Bot API Update as getUpdates returns it; the fake builds `message` ones, any other shape can be injected raw. */
export interface TelegramUpdate {
  update_id: number;
  [field: string]: unknown;
}
export interface TelegramError {
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

export interface TelegramFakeOptions {
  /** The bot token the fake accepts (others get 401 Unauthorized). */
  token?: string;
  bot?: { id: number; first_name: string; username: string };
  /** How long the webhook delivery waits before POSTing an update again after a non-2xx or a failed request. */
  webhookRetryMs?: number;
}

/** One POST of an update to the webhook: `status` 0 when the request itself failed (refused, reset, timed out). */
export interface WebhookDelivery {
  update_id: number;
  status: number;
  at: number;
}

export interface InboundMessage {
  chat: TelegramChat;
  from?: TelegramUser;
  text?: string;
  message_thread_id?: number;
  /** The message_id of the message this one replies to (a bot message, for "a reply to the bot"). */
  reply_to_message_id?: number;
  entities?: Array<{ type: string; offset: number; length: number }>;
  /** An inbound file, stored so getFile and the download serve it. */
  document?: { name: string; type?: string; content: Buffer };
  /** An inbound photo (Telegram re-encodes photos as JPEG and sends no file name): served like `document`. */
  photo?: { content: Buffer; width?: number; height?: number };
  caption?: string;
}

export interface TelegramFake {
  /** The value for grammY's `client.apiRoot` (no trailing slash). */
  apiRoot: string;
  token: string;
  bot: TelegramUser;
  /** Every call a client made (getUpdates included), in order. */
  calls: RecordedCall[];
  /** The calls of one method, a shortcut over `calls`. */
  callsOf(method: string): RecordedCall[];
  /** How many long polls a second poller ended with 409 Conflict: more than one client polling this bot. */
  readonly conflicts: number;
  /** The messages the bot sent (sendMessage, sendDocument, sendPhoto), as the Bot API returned them. */
  sent: Array<Record<string, unknown>>;
  /** Queues an incoming message as a `message` update; answers the update (with its update_id and message_id). */
  injectMessage(message: InboundMessage): TelegramUpdate;
  /** Queues any update (the update_id is assigned). */
  injectUpdate(update: Record<string, unknown>): TelegramUpdate;
  /** The updates not yet confirmed by a getUpdates offset past them. */
  pending(): TelegramUpdate[];
  /** The next call of `method` fails with this error instead (for 429 retry_after, 400s, 5xx). */
  failNext(method: string, error: TelegramError): void;
  /**
   * Cuts every getUpdates long poll in flight the way a network failure or a restarted server does: its socket is
   * destroyed with no answer. Nothing is confirmed by it, so the updates stay pending. Answers how many were cut.
   */
  dropConnections(): number;
  /** Every POST of an update to a webhook, in order. */
  deliveries: WebhookDelivery[];
  stop(): Promise<void>;
}

const CONFLICT = 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
const WEBHOOK_ACTIVE = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export async function startTelegramFake(options: TelegramFakeOptions = {}): Promise<TelegramFake> {
  const token = options.token ?? '123456:TEST-token';
  const bot: TelegramUser = {
    id: options.bot?.id ?? 123456,
    is_bot: true,
    first_name: options.bot?.first_name ?? 'Talon',
    username: options.bot?.username ?? 'talon_test_bot',
  };
  const calls: RecordedCall[] = [];
  const sent: Array<Record<string, unknown>> = [];
  const failures = new Map<string, TelegramError[]>();
  const files = new Map<string, { path: string; file: FakeFile }>();
  let updates: TelegramUpdate[] = [];
  let nextUpdateId = 1000;
  let nextMessageId = 1;
  let nextFileId = 1;
  /** The getUpdates request now waiting for updates: a second one ends it with 409, as Telegram does. */
  let poller: { finish(updates: TelegramUpdate[] | TelegramError): void } | undefined;
  let conflicts = 0;
  /** Long polls waiting now, for dropConnections. */
  const polls = new Set<http.ServerResponse>();
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  /** The webhook set by setWebhook: while it is, updates are POSTed to it one at a time, oldest first. */
  let webhook: { url: string; secret?: string; allowed_updates?: unknown } | undefined;
  let webhookError: { date: number; message: string } | undefined;
  const deliveries: WebhookDelivery[] = [];
  const retryMs = options.webhookRetryMs ?? 500;
  let delivering = false;
  const stopping = new AbortController();

  /** Telegram's webhook delivery: the oldest update until a 2xx answers it, waiting retryMs after each failure. */
  const deliver = async () => {
    if (delivering) return;
    delivering = true;
    try {
      while (webhook && updates.length && !stopping.signal.aborted) {
        const [update, target] = [updates[0]!, webhook];
        let status = 0;
        try {
          const res = await fetch(target.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(target.secret ? { 'x-telegram-bot-api-secret-token': target.secret } : {}) },
            body: JSON.stringify(update),
            signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(30_000)]),
          });
          status = res.status;
          await res.arrayBuffer();
        } catch (err) {
          webhookError = { date: nowSeconds(), message: `Connection failed: ${(err as Error).message}` };
        }
        deliveries.push({ update_id: update.update_id, status, at: Date.now() });
        if (status >= 200 && status < 300) {
          updates = updates.filter((u) => u !== update);
          continue;
        }
        if (status) webhookError = { date: nowSeconds(), message: `Wrong response from the webhook: ${status}` };
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    } finally {
      delivering = false;
    }
  };

  const storeFile = (file: FakeFile, folder: string) => {
    const id = `file-${nextFileId++}`;
    const ext = file.name.includes('.') ? file.name.slice(file.name.lastIndexOf('.')) : '';
    files.set(id, { path: `${folder}/file_${id}${ext}`, file });
    return { file_id: id, file_unique_id: `u${id}`, file_size: file.content.length };
  };

  const fail = (res: http.ServerResponse, e: TelegramError) => sendJson(res, e.error_code, { ok: false, ...e });
  const ok = (res: http.ServerResponse, result: unknown) => sendJson(res, 200, { ok: true, result });
  const bad = (res: http.ServerResponse, description: string) => fail(res, { error_code: 400, description: `Bad Request: ${description}` });

  const outgoing = (params: Record<string, unknown>, fields: Record<string, unknown>) => {
    const chatId = params.chat_id;
    const message: Record<string, unknown> = {
      message_id: nextMessageId++,
      from: bot,
      chat: { id: Number(chatId), type: Number(chatId) < 0 ? 'supergroup' : 'private' },
      date: nowSeconds(),
      ...(params.message_thread_id !== undefined ? { message_thread_id: Number(params.message_thread_id), is_topic_message: true } : {}),
      ...fields,
    };
    const replyTo = replyTarget(params);
    if (replyTo !== undefined) message.reply_to_message = { message_id: replyTo, chat: message.chat, date: message.date };
    sent.push(message);
    return message;
  };

  const methods: Record<string, (params: Record<string, unknown>, res: http.ServerResponse) => void> = {
    getMe: (_p, res) => ok(res, { ...bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false }),
    deleteWebhook: (p, res) => {
      if (isTrue(p.drop_pending_updates)) updates = [];
      webhook = undefined;
      webhookError = undefined;
      ok(res, true);
    },
    setWebhook: (p, res) => {
      const url = typeof p.url === 'string' ? p.url : '';
      if (p.secret_token !== undefined && !SECRET_TOKEN.test(String(p.secret_token))) return bad(res, 'secret token contains unallowed characters');
      if (isTrue(p.drop_pending_updates)) updates = [];
      // An empty url removes the webhook, as deleteWebhook does.
      if (!url) webhook = undefined;
      else {
        if (!/^https?:\/\/\S+$/.test(url)) return bad(res, 'bad webhook: an HTTPS URL must be provided for webhook');
        const allowed = typeof p.allowed_updates === 'string' ? (JSON.parse(p.allowed_updates) as unknown) : p.allowed_updates;
        webhook = {
          url,
          ...(p.secret_token !== undefined ? { secret: String(p.secret_token) } : {}),
          ...(allowed !== undefined ? { allowed_updates: allowed } : {}),
        };
        // A long poll in flight ends: Telegram answers it with the webhook's conflict.
        poller?.finish({ error_code: 409, description: WEBHOOK_ACTIVE });
        void deliver();
      }
      webhookError = undefined;
      ok(res, true);
    },
    getWebhookInfo: (_p, res) =>
      ok(res, {
        url: webhook?.url ?? '',
        has_custom_certificate: false,
        pending_update_count: webhook ? updates.length : 0,
        ...(webhookError ? { last_error_date: webhookError.date, last_error_message: webhookError.message } : {}),
        ...(webhook?.allowed_updates !== undefined ? { allowed_updates: webhook.allowed_updates } : {}),
      }),
    getUpdates: (p, res) => {
      if (webhook) return fail(res, { error_code: 409, description: WEBHOOK_ACTIVE });
      const offset = p.offset === undefined ? undefined : Number(p.offset);
      // An offset confirms every update before it: those are gone for good. A negative one keeps only the last -offset.
      if (offset !== undefined && offset >= 0) updates = updates.filter((u) => u.update_id >= offset);
      else if (offset !== undefined) updates = updates.slice(offset);
      const limit = Math.min(Math.max(Number(p.limit ?? 100), 1), 100);
      const timeout = Math.max(Number(p.timeout ?? 0), 0);
      if (poller) conflicts++;
      poller?.finish({ error_code: 409, description: CONFLICT });
      const answer = () => updates.slice(0, limit);
      if (answer().length || timeout === 0) return ok(res, answer());
      let done = false;
      const finish = (result: TelegramUpdate[] | TelegramError) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        waiters.delete(onUpdate);
        if (poller === me) poller = undefined;
        polls.delete(res);
        if (res.destroyed) return;
        if (Array.isArray(result)) ok(res, result);
        else fail(res, result);
      };
      const me = { finish };
      const onUpdate = () => finish(answer());
      const timer = setTimeout(() => finish(answer()), timeout * 1000);
      waiters.add(onUpdate);
      poller = me;
      polls.add(res);
      // A client that gives up (abort, socket closed) is no longer the poller.
      res.once('close', () => finish([]));
    },
    sendMessage: (p, res) => {
      const text = typeof p.text === 'string' ? p.text : '';
      if (!text.trim()) return bad(res, 'message text is empty');
      let plain = text;
      if (p.parse_mode === 'HTML') {
        const parsed = parseTelegramHtml(text);
        if ('error' in parsed) return fail(res, { error_code: 400, description: parsed.error });
        plain = parsed.text;
      }
      // The limit counts UTF-16 code units of the text after entity parsing.
      if (plain.length > 4096) return bad(res, 'message is too long');
      ok(res, outgoing(p, { text: plain }));
    },
    sendChatAction: (p, res) => {
      if (p.chat_id === undefined) return bad(res, 'chat_id is empty');
      if (typeof p.action !== 'string') return bad(res, 'action is empty');
      ok(res, true);
    },
    sendDocument: (p, res) => {
      const file = p.document;
      if (!isFile(file)) return bad(res, typeof file === 'string' ? 'wrong remote file identifier specified' : 'there is no document in the request');
      const stored = storeFile(file, 'documents');
      ok(res, outgoing(p, { document: { ...stored, file_name: file.name, mime_type: file.type || 'application/octet-stream' }, ...caption(p) }));
    },
    sendPhoto: (p, res) => {
      const file = p.photo;
      if (!isFile(file)) return bad(res, typeof file === 'string' ? 'wrong remote file identifier specified' : 'there is no photo in the request');
      const stored = storeFile(file, 'photos');
      ok(res, outgoing(p, { photo: [{ ...stored, width: 1, height: 1 }], ...caption(p) }));
    },
    getFile: (p, res) => {
      const entry = files.get(String(p.file_id));
      if (!entry) return bad(res, 'invalid file_id');
      ok(res, { file_id: p.file_id, file_unique_id: `u${String(p.file_id)}`, file_size: entry.file.content.length, file_path: entry.path });
    },
  };

  const http_ = await listen(async (req, res, url) => {
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) {
      const entry = file[1] === token ? [...files.values()].find((f) => f.path === decodeURIComponent(file[2]!)) : undefined;
      if (!entry) return sendJson(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      res.writeHead(200, { 'content-type': entry.file.type || 'application/octet-stream', 'content-length': entry.file.content.length });
      return void res.end(entry.file.content);
    }
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!m) return sendJson(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, given, method] = m as unknown as [string, string, string];
    const params = attachments(await readParams(req, url));
    calls.push({ method, params, at: Date.now() });
    if (given !== token) return fail(res, { error_code: 401, description: 'Unauthorized' });
    const handler = methods[method];
    if (!handler) return sendJson(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    const queued = failures.get(method)?.shift();
    if (queued) return fail(res, queued);
    handler(params, res);
  });

  const injectUpdate = (update: Record<string, unknown>): TelegramUpdate => {
    const full: TelegramUpdate = { ...update, update_id: nextUpdateId++ };
    updates.push(full);
    wake();
    void deliver();
    return full;
  };

  return {
    apiRoot: `http://127.0.0.1:${http_.port}`,
    token,
    bot,
    calls,
    callsOf: (method) => calls.filter((c) => c.method === method),
    get conflicts() {
      return conflicts;
    },
    sent,
    injectUpdate,
    injectMessage(msg) {
      const from = msg.from ?? { id: msg.chat.id > 0 ? msg.chat.id : 42, is_bot: false, first_name: 'Alice', username: 'alice' };
      const message: Record<string, unknown> = { message_id: nextMessageId++, from, chat: msg.chat, date: nowSeconds() };
      if (msg.text !== undefined) message.text = msg.text;
      if (msg.entities) message.entities = msg.entities;
      if (msg.caption !== undefined) message.caption = msg.caption;
      if (msg.message_thread_id !== undefined) Object.assign(message, { message_thread_id: msg.message_thread_id, is_topic_message: true });
      if (msg.reply_to_message_id !== undefined) {
        const original = sent.find((s) => s.message_id === msg.reply_to_message_id);
        message.reply_to_message = original ?? { message_id: msg.reply_to_message_id, chat: msg.chat, date: nowSeconds() };
      }
      if (msg.document) {
        const file: FakeFile = { name: msg.document.name, type: msg.document.type ?? 'application/octet-stream', content: msg.document.content };
        message.document = { ...storeFile(file, 'documents'), file_name: file.name, mime_type: file.type };
      }
      if (msg.photo) {
        const stored = storeFile({ name: 'photo.jpg', type: 'image/jpeg', content: msg.photo.content }, 'photos');
        // The sizes Telegram generates, smallest first; the fake serves the one file for each.
        const [width, height] = [msg.photo.width ?? 800, msg.photo.height ?? 600];
        message.photo = [
          { ...stored, width: Math.round(width / 10), height: Math.round(height / 10) },
          { ...stored, width, height },
        ];
      }
      return injectUpdate({ message });
    },
    pending: () => [...updates],
    failNext(method, error) {
      failures.set(method, [...(failures.get(method) ?? []), error]);
    },
    dropConnections() {
      const cut = [...polls];
      for (const res of cut) res.socket?.destroy();
      return cut.length;
    },
    deliveries,
    async stop() {
      stopping.abort();
      poller?.finish([]);
      await http_.close();
    },
  };
}

/** A parameter `attach://<name>` names the multipart part holding the file (grammY sends every upload that way). */
function attachments(params: Record<string, unknown>): Record<string, unknown> {
  const out = { ...params };
  for (const [key, value] of Object.entries(params)) {
    const part = typeof value === 'string' && value.startsWith('attach://') ? params[value.slice('attach://'.length)] : undefined;
    if (part !== undefined) out[key] = part;
  }
  return out;
}

function isFile(v: unknown): v is FakeFile {
  return typeof v === 'object' && v !== null && Buffer.isBuffer((v as FakeFile).content);
}
function isTrue(v: unknown): boolean {
  return v === true || v === 'true';
}
function caption(p: Record<string, unknown>): Record<string, unknown> {
  return typeof p.caption === 'string' ? { caption: p.caption } : {};
}
/** reply_parameters (Bot API 7+) or the older reply_to_message_id; form bodies carry the former as a JSON string. */
function replyTarget(p: Record<string, unknown>): number | undefined {
  const rp = typeof p.reply_parameters === 'string' ? (JSON.parse(p.reply_parameters) as unknown) : p.reply_parameters;
  if (rp && typeof rp === 'object' && 'message_id' in rp) return Number((rp as { message_id: unknown }).message_id);
  return p.reply_to_message_id === undefined ? undefined : Number(p.reply_to_message_id);
}
