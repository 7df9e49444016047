/**
 * A fake WhatsApp Business Cloud API (the Graph API under `/v21.0`) on 127.0.0.1 and Meta's webhook deliveries to a
 * callback URL. Graph: `GET /{phone-number-id}` (the token check), `POST /{phone-number-id}/messages` (text, and
 * image/document/audio/video by an uploaded media id, `context.message_id` for a reply), `POST /{phone-number-id}/media`
 * (multipart: file, type, messaging_product), `GET /{media-id}` (the media's url, mime_type, sha256, file_size) and the
 * download of that url with the token. Errors are Graph's `{error: {message, type, code, fbtrace_id}}`: 401 code 190
 * for a bad token, 429 code 130429 (no Retry-After header, as Meta sends none) for a throughput limit. Webhooks:
 * a `whatsapp_business_account` payload POSTed with `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body with the
 * app secret>`, sent again until a 2xx comes back (Meta retries for days), and the GET verification handshake.
 * See test/fakes/README.md for what is faithful and what is not.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { listen, readParams, sendJson, type FakeFile, type RecordedCall } from '../http.ts';

export interface WhatsAppFakeOptions {
  token?: string;
  appSecret?: string;
  verifyToken?: string;
  /** How long the fake waits before delivering a webhook again after a non-2xx or no answer. */
  retryMs?: number;
  /** How many times a delivery is attempted (Meta retries for up to 7 days). */
  maxAttempts?: number;
}

/** A message the business number sent (POST /messages), as the fake took it. */
export interface WhatsAppSent {
  id: string;
  to: string;
  type: string;
  text?: string;
  /** The uploaded media the message carries (image, document, audio, video by id). */
  mediaId?: string;
  caption?: string;
  filename?: string;
  replyTo?: string;
}

export interface WhatsAppUpload {
  id: string;
  name: string;
  mediaType: string;
  data: Buffer;
}

/** A message a user sends to the business number (injected into the webhook). */
export interface InboundWhatsApp {
  from: string;
  text?: string;
  name?: string;
  /** A file the user sends: an image for image/png or image/jpeg, a document otherwise. */
  media?: { name?: string; mediaType: string; data: Buffer };
  /** The message's wamid (a new one unless given: a re-delivery of the same message keeps it). */
  id?: string;
}

export interface WhatsAppDelivery {
  body: string;
  status: number;
}

export interface WhatsAppFake {
  /** The Graph root with its version, for the adapter's `api_url`. */
  apiUrl: string;
  token: string;
  appSecret: string;
  verifyToken: string;
  phoneNumberId: string;
  /** Every Graph call, in order. */
  calls: RecordedCall[];
  sent: WhatsAppSent[];
  uploads: WhatsAppUpload[];
  /** Each webhook POST and the status it got, in order. */
  deliveries: WhatsAppDelivery[];
  /** From now on webhooks are POSTed to `url`. */
  deliverTo(url: string): void;
  /** Meta's verification GET (hub.mode=subscribe, hub.verify_token, hub.challenge) to the delivery URL. */
  verify(challenge: string, verifyToken?: string): Promise<{ status: number; text: string }>;
  /** `X-Hub-Signature-256` for a body. */
  sign(body: string): string;
  /** Delivers a user's message (retried until a 2xx); resolves with its wamid once the delivery was sent once. */
  injectMessage(message: InboundWhatsApp): { id: string; body: string };
  /** Delivers a status update (sent/delivered/read) of a message the bot sent. */
  injectStatus(messageId: string, recipient: string, status: 'sent' | 'delivered' | 'read'): void;
  /** Posts a raw body with the given signature header once, for tests of refusals. */
  post(body: string, signature?: string): Promise<{ status: number; text: string }>;
  /** The next POST /messages answers 429 (code 130429). */
  rateLimitNext(): void;
  /** Files the bot sent to `to`, oldest first (the uploads its messages carried). */
  filesTo(to: string): Array<{ name: string; mediaType: string; data: Buffer }>;
  stop(): Promise<void>;
}

const VERSION = 'v21.0';

const graphError = (message: string, code: number, type = 'OAuthException') => ({
  error: { message, type, code, fbtrace_id: randomBytes(8).toString('hex') },
});

const wamid = () => `wamid.${randomBytes(18).toString('base64url')}`;
const mediaId = () => String(10n ** 15n + BigInt(`0x${randomBytes(5).toString('hex')}`));

export async function startWhatsAppFake(options: WhatsAppFakeOptions = {}): Promise<WhatsAppFake> {
  const token = options.token ?? 'EAAG-talon-test-token';
  const appSecret = options.appSecret ?? 'talon-test-app-secret';
  const verifyToken = options.verifyToken ?? 'talon-test-verify-token';
  const retryMs = options.retryMs ?? 500;
  const maxAttempts = options.maxAttempts ?? 20;
  const phoneNumberId = '106540352242922';
  const calls: RecordedCall[] = [];
  const sent: WhatsAppSent[] = [];
  const uploads: WhatsAppUpload[] = [];
  const deliveries: WhatsAppDelivery[] = [];
  /** Every media the Graph serves by id: the bot's uploads and the users' files. */
  const media = new Map<string, { name?: string; mediaType: string; data: Buffer }>();
  let deliveryUrl: string | undefined;
  let rateLimited = false;
  const closing = new AbortController();

  const server = await listen(async (req, res, url) => {
    const path = url.pathname;
    if (req.headers.authorization !== `Bearer ${token}`) return sendJson(res, 401, graphError('Invalid OAuth access token - Cannot parse access token', 190));
    const download = /^\/media\/(\d+)$/.exec(path);
    if (download && req.method === 'GET') {
      const file = media.get(download[1]!);
      if (!file) return sendJson(res, 404, graphError('not found', 100, 'GraphMethodException'));
      res.writeHead(200, { 'content-type': file.mediaType, 'content-length': file.data.length });
      return void res.end(file.data);
    }
    const [version, node, edge, ...rest] = path.split('/').slice(1);
    if (version !== VERSION || !node || rest.length) return sendJson(res, 400, graphError(`Unknown path components: ${path}`, 2500));
    const params = await readParams(req, url);
    calls.push({ method: `${req.method} ${edge ? `/{id}/${edge}` : '/{id}'}`, params, at: Date.now() });
    if (!edge && req.method === 'GET') {
      if (node === phoneNumberId) return sendJson(res, 200, { id: phoneNumberId, display_phone_number: '+1 555 010 0100', verified_name: 'Talon Test' });
      const file = media.get(node);
      if (!file) return sendJson(res, 400, graphError(`Unsupported get request. Object with ID '${node}' does not exist`, 100, 'GraphMethodException'));
      return sendJson(res, 200, {
        messaging_product: 'whatsapp',
        url: `http://127.0.0.1:${server.port}/media/${node}`,
        mime_type: file.mediaType,
        sha256: createHash('sha256').update(file.data).digest('hex'),
        file_size: file.data.length,
        id: node,
      });
    }
    if (node !== phoneNumberId || req.method !== 'POST') return sendJson(res, 400, graphError('Unsupported request', 100, 'GraphMethodException'));
    if (params.messaging_product !== 'whatsapp') return sendJson(res, 400, graphError('(#100) The parameter messaging_product is required.', 100));
    if (edge === 'media') {
      const file = params.file as FakeFile | undefined;
      if (!file || typeof params.type !== 'string') return sendJson(res, 400, graphError('(#100) The parameter file is required.', 100));
      const id = mediaId();
      media.set(id, { name: file.name, mediaType: params.type, data: file.content });
      uploads.push({ id, name: file.name, mediaType: params.type, data: file.content });
      return sendJson(res, 200, { id });
    }
    if (edge !== 'messages') return sendJson(res, 400, graphError(`Unknown edge ${edge}`, 2500));
    if (rateLimited) {
      rateLimited = false;
      return sendJson(res, 429, graphError('(#130429) Rate limit hit', 130429));
    }
    const to = params.to;
    const type = params.type;
    if (typeof to !== 'string' || typeof type !== 'string') return sendJson(res, 400, graphError('(#100) The parameter to is required.', 100));
    const message: WhatsAppSent = { id: wamid(), to, type };
    const part = params[type] as Record<string, unknown> | undefined;
    if (type === 'text') {
      const body = part?.body;
      if (typeof body !== 'string' || !body || body.length > 4096) return sendJson(res, 400, graphError('(#100) Param text[body] is invalid', 100));
      message.text = body;
    } else if (['image', 'document', 'audio', 'video'].includes(type)) {
      if (typeof part?.id !== 'string' || !media.has(part.id)) return sendJson(res, 400, graphError('(#131053) Media upload error', 131053));
      message.mediaId = part.id;
      if (typeof part.caption === 'string') message.caption = part.caption;
      if (typeof part.filename === 'string') message.filename = part.filename;
    } else return sendJson(res, 400, graphError(`(#100) Unsupported message type ${type}`, 100));
    const context = params.context as { message_id?: unknown } | undefined;
    if (typeof context?.message_id === 'string') message.replyTo = context.message_id;
    sent.push(message);
    return sendJson(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: message.id }] });
  });

  const sign = (body: string) => `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;

  const post = async (body: string, signature?: string) => {
    if (!deliveryUrl) throw new Error('no delivery URL: call deliverTo first');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature !== undefined) headers['x-hub-signature-256'] = signature;
    const res = await fetch(deliveryUrl, { method: 'POST', headers, body, signal: closing.signal });
    return { status: res.status, text: await res.text() };
  };

  /** Meta's delivery: POSTed until a 2xx, with a pause between attempts. */
  const deliver = (body: string) => {
    void (async () => {
      for (let attempt = 0; attempt < maxAttempts && !closing.signal.aborted; attempt++) {
        const status = await post(body, sign(body)).then(
          (r) => r.status,
          () => 0,
        );
        deliveries.push({ body, status });
        if (status >= 200 && status < 300) return;
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    })();
  };

  const envelope = (value: Record<string, unknown>) =>
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102290129340398',
          changes: [
            {
              field: 'messages',
              value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550100100', phone_number_id: phoneNumberId }, ...value },
            },
          ],
        },
      ],
    });

  return {
    apiUrl: `http://127.0.0.1:${server.port}/${VERSION}`,
    token,
    appSecret,
    verifyToken,
    phoneNumberId,
    calls,
    sent,
    uploads,
    deliveries,
    deliverTo(url) {
      deliveryUrl = url;
    },
    async verify(challenge, given = verifyToken) {
      if (!deliveryUrl) throw new Error('no delivery URL: call deliverTo first');
      const url = new URL(deliveryUrl);
      url.search = new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.verify_token': given, 'hub.challenge': challenge }).toString();
      const res = await fetch(url);
      return { status: res.status, text: await res.text() };
    },
    sign,
    injectMessage(message) {
      const id = message.id ?? wamid();
      const base = { from: message.from, id, timestamp: String(Math.floor(Date.now() / 1000)) };
      let body: Record<string, unknown>;
      if (message.media) {
        const fileId = mediaId();
        media.set(fileId, message.media);
        const type = /^image\/(png|jpeg)$/.test(message.media.mediaType) ? 'image' : 'document';
        const part = {
          id: fileId,
          mime_type: message.media.mediaType,
          sha256: createHash('sha256').update(message.media.data).digest('base64'),
          ...(message.text ? { caption: message.text } : {}),
          ...(type === 'document' && message.media.name ? { filename: message.media.name } : {}),
        };
        body = { ...base, type, [type]: part };
      } else body = { ...base, type: 'text', text: { body: message.text ?? '' } };
      const raw = envelope({ contacts: [{ profile: { name: message.name ?? 'Alice' }, wa_id: message.from }], messages: [body] });
      deliver(raw);
      return { id, body: raw };
    },
    injectStatus(messageId, recipient, status) {
      deliver(envelope({ statuses: [{ id: messageId, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: recipient }] }));
    },
    post,
    rateLimitNext() {
      rateLimited = true;
    },
    filesTo(to) {
      return sent
        .filter((m) => m.to === to && m.mediaId)
        .map((m) => {
          const file = media.get(m.mediaId!)!;
          return { name: m.filename ?? file.name ?? '', mediaType: file.mediaType, data: file.data };
        });
    },
    async stop() {
      closing.abort();
      await server.close();
    },
  };
}
