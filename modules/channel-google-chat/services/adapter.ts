/**
 * The Google Chat adapter (channel `google_chat`): no connection of its own. Chat POSTs interaction events to the
 * module's route, which verifies the bearer JWT and hands MESSAGE events to the running receiver; it answers only once
 * the message is committed. Replies go by the REST API (`spaces.messages.create`) with the service account's access
 * token, not as the event's synchronous response: a turn takes longer than Chat waits for that response (30 s), and
 * the response may only be sent after the commit, which would leave nothing to answer with. Each create carries the
 * chunk's nonce as `requestId`: Chat answers a repeated id with the message it created, so a chunk found `sending`
 * after a crash is sent again without a duplicate.
 */
import type { ChannelAdapter, ChannelKit, OutboundChunk } from '@talon/channels';
import { DEFAULT_API_URL, DEFAULT_ISSUER, DEFAULT_JWKS_URL, DEFAULT_TOKEN_URL, googleChatFields } from '../config.ts';
import { accessTokens, parseKey, requestVerifier } from './auth.ts';
import { toInbound, type ChatEndpoint, type ChatReceiver } from './events.ts';
import { channelError, googleFetch } from './http.ts';

const SPACE = /^spaces\/[A-Za-z0-9_-]{1,100}$/;

export function googleChatAdapter(endpoint: ChatEndpoint, kit: () => ChannelKit): ChannelAdapter {
  return {
    name: 'google_chat',
    description: 'Google Chat app: interaction events in at POST /api/channels/google_chat/events (bearer JWT verified), replies by the Chat REST API',
    fields: googleChatFields,
    secretFields: [],
    urlFields: ['api_url', 'token_url', 'jwks_url'],
    // Files out need user authentication on Chat (media.upload), which an app's service account does not have.
    capabilities: { threads: true, media: false, typing: false, edits: false, qr: false, platformDedup: true },
    limits: { maxLength: 4096, unit: 'utf16', format: 'slack_mrkdwn' },
    async start(ctx) {
      const key = parseKey(ctx.secrets.token);
      const apiUrl = String(ctx.config.api_url ?? DEFAULT_API_URL);
      const tokens = accessTokens(ctx, kit, key, String(ctx.config.token_url ?? DEFAULT_TOKEN_URL));
      const requests = requestVerifier(ctx, kit, {
        jwksUrl: String(ctx.config.jwks_url ?? DEFAULT_JWKS_URL),
        issuer: String(ctx.config.issuer ?? DEFAULT_ISSUER),
        audience: String(ctx.config.project_number),
      });
      // Both credentials are checked at start: a refused key stops the channel with last_error.
      await tokens.get();
      await requests.load();
      const receiver: ChatReceiver = {
        verify: (authorization) => requests.verify(authorization),
        async take(event) {
          const message = toInbound(event);
          if (message) await ctx.emit(message);
        },
      };
      endpoint.current = receiver;
      ctx.report('connected');
      return {
        async send(chunk: OutboundChunk) {
          if (!SPACE.test(chunk.chatId)) throw channelError(`'${chunk.chatId}' is not a space name (spaces/…)`, 'permanent');
          const query = new URLSearchParams({
            requestId: chunk.nonce,
            ...(chunk.threadId ? { messageReplyOption: 'REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD' } : {}),
          });
          const body = JSON.stringify({ text: chunk.text, ...(chunk.threadId ? { thread: { name: chunk.threadId } } : {}) });
          const res = await googleFetch(ctx, kit, {
            what: 'Google Chat',
            url: `${apiUrl}/v1/${chunk.chatId}/messages?${query}`,
            method: 'POST',
            headers: { authorization: `Bearer ${await tokens.get()}`, 'content-type': 'application/json' },
            body,
          }).catch((err: Error & { kind?: string }) => {
            // A token revoked before its time: a fresh one for the retry rather than a stopped channel.
            if (err.kind === 'auth') {
              tokens.drop();
              throw channelError(err.message, 'transient');
            }
            throw err;
          });
          const name = (JSON.parse(res.body.toString('utf8')) as { name?: unknown }).name;
          return { messageId: typeof name === 'string' ? name : chunk.nonce };
        },
        async stop() {
          if (endpoint.current === receiver) endpoint.current = undefined;
        },
      };
    },
  };
}
