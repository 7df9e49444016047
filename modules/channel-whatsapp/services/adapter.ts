/**
 * The WhatsApp adapter, two modes on one channel (`mode`). Cloud (the default): the Business Cloud API over plain HTTP
 * (no SDK: Meta ships none for Node, and the API is a handful of JSON calls) through the context's net fetch. Starting
 * checks the token and phone number id with `GET /{phone-number-id}` (a refused token stops the channel with
 * last_error) and hands the webhook route a receiver; messages come in only by webhook, so nothing stays open and there
 * is nothing to reconnect. Replies go out with `POST /{phone-number-id}/messages`; files are uploaded first and sent by
 * their media id. Web: WhatsApp Web through Baileys on a number signed in by QR code (web/).
 *
 * Capabilities belong to the adapter, not to a mode, so they are what either mode can do: typing and QR sign-in are
 * web mode's. In cloud mode the connection has no typing (none is shown) and a QR sign-in is refused with a 400 naming
 * the mode.
 */
import type { AdapterContext, ChannelAdapter, ChannelKit, OutboundChunk } from '@talon/channels';
import { badRequest } from '@talon/module-sdk';
import { DEFAULT_API_URL, modeOf, WEBHOOK_ROUTE, whatsappFields } from '../config.ts';
import { channelError } from './errors.ts';
import { graphCall, type Graph } from './graph.ts';
import { messageTypeOf, uploadMedia } from './media.ts';
import { webhookReceiver, type WhatsAppEndpoint } from './webhook.ts';
import { startWeb, type WebDeps } from './web/connection.ts';
import { baileysLogger, type WaCodec } from './web/baileys.ts';
import { startQrSignIn } from './web/qr.ts';

/** The limiter's account key: one adapter is one business number. */
const ACCOUNT = 'whatsapp';

/** What web mode takes from the module: the socket factory, the auth store and its codec, the media conversion. */
export interface WebModeDeps extends Omit<WebDeps, 'kit'> {
  codec: () => Promise<WaCodec>;
}

export function whatsappAdapter(kit: () => ChannelKit, endpoint: WhatsAppEndpoint, web: WebModeDeps): ChannelAdapter {
  return {
    name: 'whatsapp',
    description:
      'WhatsApp: the Business Cloud API (direct messages by signed webhook, replies and files through the Graph API) or WhatsApp Web signed in by QR code (direct and group chats)',
    fields: whatsappFields,
    secretFields: ['verify_token', 'app_secret'],
    urlFields: ['api_url'],
    // No threads (WhatsApp has replies, not threads); no edits (streamed replies are not edited in place); a send
    // carries no nonce WhatsApp would deduplicate. Typing and QR sign-in: web mode only (above).
    capabilities: { threads: false, media: true, typing: true, edits: false, qr: true, platformDedup: false },
    // A text message's body takes at most 4096 characters; WhatsApp's own *bold*/_italic_ is not Markdown: plain text.
    limits: { maxLength: 4096, unit: 'utf16', format: 'plain' },
    start: (ctx) => (modeOf(ctx.config) === 'web' ? startWeb(ctx, { ...web, kit: kit() }) : startCloud(ctx, kit(), endpoint)),
    async qr(ctx) {
      if (modeOf(ctx.config) !== 'web')
        throw badRequest(`channel 'whatsapp' is in mode "cloud", which signs in with a token: configure mode "web" first to sign in by QR code`);
      const [auth, codec] = await Promise.all([web.auth(), web.codec()]);
      return startQrSignIn({ factory: web.factory(), freshCreds: codec.freshCreds, auth, logger: baileysLogger(ctx.log) });
    },
  };
}

function required(ctx: AdapterContext): { token: string; phoneNumberId: string; appSecret: string; verifyToken: string } {
  const token = ctx.secrets.token;
  const appSecret = ctx.secrets.app_secret;
  const verifyToken = ctx.secrets.verify_token;
  const phoneNumberId = ctx.config.phone_number_id;
  if (!token) throw channelError('auth', "whatsapp: 'token' (a system user's access token with whatsapp_business_messaging) is not set");
  if (typeof phoneNumberId !== 'string') throw channelError('permanent', "whatsapp: 'phone_number_id' (WhatsApp → API Setup) is not set");
  if (!appSecret) throw channelError('auth', "whatsapp: 'app_secret' (App settings → Basic → App Secret) is not set; every webhook is checked with it");
  if (!verifyToken) throw channelError('auth', `whatsapp: 'verify_token' is not set; Meta's verification of ${WEBHOOK_ROUTE} needs it`);
  return { token, phoneNumberId, appSecret, verifyToken };
}

async function startCloud(ctx: AdapterContext, kit: ChannelKit, endpoint: WhatsAppEndpoint) {
  const { token, phoneNumberId, appSecret, verifyToken } = required(ctx);
  const graph: Graph = { ctx, kit, token, root: typeof ctx.config.api_url === 'string' ? ctx.config.api_url : DEFAULT_API_URL };
  await graphCall(graph, 'GET', `/${phoneNumberId}`);
  const receiver = webhookReceiver(ctx, graph, phoneNumberId, { appSecret, verifyToken });
  endpoint.current = receiver;
  ctx.report('connected');
  // Meta's business-initiated throughput is tens of messages a second per number; a person reads one at a time.
  const limiter = new kit.SendLimiter({ account: { capacity: 40, perSecond: 20 }, chat: { capacity: 3, perSecond: 1 } });

  return {
    async send(chunk: OutboundChunk) {
      await limiter.acquire(ACCOUNT, chunk.chatId, ctx.signal);
      const answer = await graphCall(graph, 'POST', `/${phoneNumberId}/messages`, { json: await messageOf(graph, phoneNumberId, chunk) });
      const id = (answer.messages as Array<{ id?: unknown }> | undefined)?.[0]?.id;
      if (typeof id !== 'string') throw channelError('transient', 'whatsapp: the send answered no message id');
      return { messageId: id };
    },
    async stop() {
      if (endpoint.current === receiver) endpoint.current = undefined;
    },
  };
}

/** The /messages body of a chunk: its text, or its file (uploaded now) with the text as the caption where one fits. */
async function messageOf(graph: Graph, phoneNumberId: string, chunk: OutboundChunk): Promise<Record<string, unknown>> {
  const base = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: chunk.chatId,
    ...(chunk.replyTo ? { context: { message_id: chunk.replyTo } } : {}),
  };
  const media = chunk.media;
  // Uploads only carry content here: a file given by URL went into the text as a link (the channels module).
  if (media?.data === undefined) return { ...base, type: 'text', text: { body: chunk.text, preview_url: false } };
  const id = await uploadMedia(graph, phoneNumberId, { ...media, data: media.data });
  const type = messageTypeOf(media.mediaType);
  // Audio takes no caption; a document keeps its name.
  const part = {
    id,
    ...(type !== 'audio' && chunk.text ? { caption: chunk.text } : {}),
    ...(type === 'document' ? { filename: media.name } : {}),
  };
  return { ...base, type, [type]: part };
}
