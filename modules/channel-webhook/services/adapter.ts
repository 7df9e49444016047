/**
 * The webhook adapter: no connection of its own. Inbound POSTs reach the module's route, which hands them to the
 * running adapter through `endpoint`; replies are signed POSTs to `callback_url` through the channel context's net
 * fetch (the callback's origin is the one private origin it may reach). Starting sends a signed `ping` to the
 * callback: bad configuration (callback_url not a URL, a URL the net module refuses, a receiver refusing the token)
 * stops the channel with last_error; a receiver that is merely down (refused connection, 5xx) leaves it running with
 * a warning, since inbound webhooks do not need the callback and replies are retried.
 */
import type { AdapterContext, ChannelAdapter, ChannelError, ChannelKit, InboundMessage, OutboundChunk, OutboundMedia } from '@talon/channels';
import { signHeaders } from './signature.ts';

/** The running adapter as the inbound route sees it (absent while the channel is stopped). */
export interface WebhookEndpoint {
  current?: { secret: string; emit(message: InboundMessage): Promise<{ duplicate: boolean }> };
}

const SEND_TIMEOUT_MS = 15_000;

function channelError(message: string, kind: ChannelError['kind'], retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

/** A callback's HTTP status as the channels module's error kinds: 429 waits, 401/403 stop, other 4xx fail, 5xx retry. */
function statusError(status: number, retryAfter: string | string[] | undefined, kit: ChannelKit): ChannelError {
  const what = `the callback answered ${status}`;
  if (status === 429) return channelError(what, 'rate_limited', kit.retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined, Date.now()) ?? 1000);
  if (status === 401 || status === 403) return channelError(`${what}: it refuses the signature (check the token)`, 'auth');
  return channelError(what, status >= 400 && status < 500 ? 'permanent' : 'transient');
}

export function webhookAdapter(endpoint: WebhookEndpoint, kit: () => ChannelKit): ChannelAdapter {
  async function post(ctx: AdapterContext, payload: object): Promise<string> {
    const body = JSON.stringify(payload);
    const url = String(ctx.config.callback_url);
    const res = await ctx
      .fetch({
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signHeaders(ctx.secrets.token ?? '', body) },
        body,
        timeoutMs: SEND_TIMEOUT_MS,
        maxBytes: 64 * 1024,
        signal: ctx.signal,
      })
      .catch((err: unknown) => {
        // net's refusal (SSRF rule, scheme, credentials in the URL) is the configuration's fault: retrying cannot help.
        if (err instanceof Error && err.name === 'FetchRefused')
          throw Object.assign(channelError(`the callback is refused: ${err.message}`, 'permanent'), { refused: true });
        throw channelError(`the callback could not be reached: ${(err as Error).message}`, 'transient');
      });
    if (res.status < 200 || res.status >= 300) throw statusError(res.status, res.headers['retry-after'], kit());
    return res.body.toString('utf8');
  }

  return {
    name: 'webhook',
    description: 'Generic webhook: signed JSON in at POST /api/channels/webhook/inbound, signed JSON replies to callback_url (files both ways)',
    fields: {
      type: 'object',
      properties: {
        callback_url: { type: 'string', pattern: '^https?://', description: 'where replies are POSTed (signed like the inbound requests)' },
      },
      required: ['callback_url'],
      additionalProperties: false,
    },
    secretFields: [],
    urlFields: ['callback_url'],
    // Files both ways: in the inbound body's `media`, and out as a message of their own carrying the file as base64.
    capabilities: { threads: true, media: true, typing: false, edits: false, qr: false, platformDedup: false },
    limits: { maxLength: 4000, unit: 'chars', format: 'markdown' },
    async start(ctx) {
      if (!ctx.secrets.token) throw channelError('no token set: the signing secret is required', 'auth');
      if (!URL.canParse(String(ctx.config.callback_url))) throw channelError('callback_url is not a valid URL', 'permanent');
      const warning = await post(ctx, { type: 'ping' }).then(
        () => undefined,
        (err: ChannelError) => {
          if (err.kind === 'auth' || 'refused' in err) throw err;
          return `${err.message}; the channel runs, and replies are retried until the receiver answers`;
        },
      );
      endpoint.current = { secret: ctx.secrets.token, emit: (m) => ctx.emit(m) };
      ctx.report('connected', warning);
      const mine = endpoint.current;
      return {
        async send(chunk: OutboundChunk) {
          const answer = await post(ctx, {
            type: 'message',
            chat_id: chunk.chatId,
            ...(chunk.threadId !== undefined ? { thread_id: chunk.threadId } : {}),
            ...(chunk.replyTo !== undefined ? { reply_to: chunk.replyTo } : {}),
            text: chunk.text,
            ...(chunk.media ? { media: { name: chunk.media.name, media_type: chunk.media.mediaType, ...fileOf(chunk.media) } } : {}),
            nonce: chunk.nonce,
          });
          return { messageId: messageIdOf(answer) ?? chunk.nonce };
        },
        async stop() {
          if (endpoint.current === mine) endpoint.current = undefined;
        },
      };
    },
  };
}

/** An upload's content, or the link of a file given by URL. */
const fileOf = (m: OutboundMedia) => (m.data !== undefined ? { data: m.data } : { url: m.url });

/** The receiver's `message_id`, when it answered one. */
function messageIdOf(answer: string): string | undefined {
  try {
    const id = (JSON.parse(answer) as { message_id?: unknown }).message_id;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  } catch {
    return undefined;
  }
}
