/**
 * The LINE adapter: no connection of its own. LINE POSTs webhooks to the module's route, which checks the signature
 * and hands each event to the running receiver; the receiver answers only once the message is committed, so LINE's
 * redelivery (when the channel has it on) brings back what was not. Replies go by the push API rather than the reply
 * API: a reply token expires about a minute after the event and is good for one call, while an agent's turn and its
 * chunks can take longer. Each push carries `X-Line-Retry-Key`, a UUID derived from the chunk's nonce: LINE accepts a
 * key once (a repeat is a 409 that sends nothing), so a chunk found `sending` after a crash is pushed again safely.
 */
import { createHash } from 'node:crypto';
import type { ChannelAdapter, ChannelKit, OutboundChunk } from '@talon/channels';
import { DEFAULT_API_URL, DEFAULT_DATA_URL, lineFields } from '../config.ts';
import { channelError, lineApi } from './api.ts';
import { MAX_CONTENT_BYTES, toInbound } from './inbound.ts';
import { signatureValid } from './signature.ts';
import type { LineEndpoint, LineReceiver } from './webhook.ts';

/** The loading animation lasts this long unless a message ends it (LINE takes 5 to 60, a multiple of 5). */
const LOADING_SECONDS = 5;

/** The retry key of a chunk: a UUID (LINE's required form) made from its nonce, the same on every re-send. */
export function retryKey(nonce: string): string {
  const h = createHash('sha256').update(`line-retry:${nonce}`).digest('hex');
  // Version 8 ("custom") and the RFC 4122 variant bits, so the key is a well-formed UUID.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function lineAdapter(endpoint: LineEndpoint, kit: () => ChannelKit): ChannelAdapter {
  return {
    name: 'line',
    description: 'LINE Messaging API: signed webhooks in at POST /api/channels/line/webhook, replies by the push API',
    fields: lineFields,
    secretFields: ['channel_secret'],
    urlFields: ['api_url', 'data_url'],
    // No threads or edits on LINE; files come in, but the API sends files only as links to hosted https content.
    capabilities: { threads: false, media: false, typing: true, edits: false, qr: false, platformDedup: true },
    limits: { maxLength: 5000, unit: 'utf16', format: 'plain' },
    async start(ctx) {
      const secret = ctx.secrets.channel_secret;
      if (!ctx.secrets.token) throw channelError('no token set: the channel access token is required', 'auth');
      if (!secret) throw channelError('no channel_secret set: it is required to check the webhooks', 'auth');
      const apiUrl = String(ctx.config.api_url ?? DEFAULT_API_URL);
      const dataUrl = String(ctx.config.data_url ?? DEFAULT_DATA_URL);
      const api = lineApi(ctx, kit);
      // The token is checked at start: a refused one stops the channel with last_error rather than failing each reply.
      await api.call('GET', `${apiUrl}/v2/bot/info`);
      const files = lineApi(ctx, kit, { maxBytes: MAX_CONTENT_BYTES });
      const receiver: LineReceiver = {
        accepts: (signature, raw) => signatureValid(secret, signature, raw),
        async take(event) {
          const message = await toInbound(event, files, dataUrl);
          if (message) await ctx.emit(message);
        },
      };
      endpoint.current = receiver;
      ctx.report('connected');
      return {
        async send(chunk: OutboundChunk) {
          const res = await api.call(
            'POST',
            `${apiUrl}/v2/bot/message/push`,
            { to: chunk.chatId, messages: [{ type: 'text', text: chunk.text }] },
            { 'x-line-retry-key': retryKey(chunk.nonce) },
            // 409: this key was accepted before (a re-send after a crash); LINE sent the message then, and not again.
            [409],
          );
          return { messageId: sentId(res.body.toString('utf8')) ?? chunk.nonce };
        },
        async typing({ chatId }) {
          // LINE shows the loading animation in one-on-one chats only (user ids start with U).
          if (chatId.startsWith('U')) await api.call('POST', `${apiUrl}/v2/bot/chat/loading/start`, { chatId, loadingSeconds: LOADING_SECONDS });
        },
        async stop() {
          if (endpoint.current === receiver) endpoint.current = undefined;
        },
      };
    },
  };
}

/** The id of the message a push sent (`sentMessages[0].id`), when LINE answered one. */
function sentId(answer: string): string | undefined {
  try {
    const id = (JSON.parse(answer) as { sentMessages?: Array<{ id?: unknown }> }).sentMessages?.[0]?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
