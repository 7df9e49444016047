/**
 * The Slack adapter: Socket Mode in (no public URL: the bot opens the socket) or, with `mode = "http"`, Events API
 * requests to the service's own route signed with the signing secret; chat.postMessage and file uploads out. Built on the two
 * official packages Bolt itself runs on, @slack/socket-mode and @slack/web-api, without Bolt: Bolt's App owns its
 * receiver, its own reconnects, and acks on its own schedule, where this adapter must ack only after the journal's
 * commit and leave reconnecting to the channels kit; Bolt's routing and listeners would go unused.
 */
import { WebClient } from '@slack/web-api';
import type { AdapterContext, ChannelAdapter, ChannelKit, OutboundChunk } from '@talon/channels';
import { channelError, toChannelError } from './errors.ts';
import { uploadFile } from './files.ts';
import { startHttpMode, type SlackEndpoint } from './http.ts';
import { runSocketMode } from './socket.ts';
import { clientOptions, slackLogger } from './web.ts';

/** The limiter's account key: one adapter is one workspace. */
const ACCOUNT = 'slack';

export function slackAdapter(kit: ChannelKit, endpoint: SlackEndpoint): ChannelAdapter {
  return {
    name: 'slack',
    description: 'Slack workspace through Socket Mode or HTTP Events API requests: DMs, channel @mentions, threads and files',
    fields: {
      type: 'object',
      properties: {
        mode: {
          type: 'string',
          enum: ['socket', 'http'],
          description: 'socket (default): the bot opens a Socket Mode connection; http: Slack POSTs events to /api/channels/slack/events',
        },
        app_token: { type: 'string', pattern: '^xapp-', description: 'the app-level token (xapp-) with connections:write, for Socket Mode' },
        signing_secret: { type: 'string', minLength: 1, description: "the app's signing secret, which HTTP mode checks every request against" },
        api_url: { type: 'string', pattern: '^https?://', description: 'the Web API root; default https://slack.com/api/' },
      },
    },
    secretFields: ['app_token', 'signing_secret'],
    urlFields: ['api_url'],
    // No typing: Slack shows a typing indicator for bots only through the legacy RTM API, not Socket Mode or the Web API.
    capabilities: { threads: true, media: true, typing: false, edits: false, qr: false, platformDedup: false },
    // Slack takes 40,000 characters of text; it truncates past 4,000 in display, and shorter messages read better.
    limits: { maxLength: 3_000, unit: 'utf16', format: 'slack_mrkdwn' },

    async start(ctx) {
      const token = ctx.secrets.token;
      if (!token) throw channelError('auth', "slack: 'token' (the bot token, xoxb-) is not set");
      const web = new WebClient(token, { ...clientOptions(ctx), logger: slackLogger(ctx.log) });
      const receiving = ctx.config.mode === 'http' ? await startHttpMode(ctx, web, token, endpoint) : await startSocketMode(ctx, kit, web, token);
      // chat.postMessage is limited to about one message a second per channel, with short bursts (Slack's docs).
      const limiter = new kit.SendLimiter({ account: { capacity: 20, perSecond: 5 }, chat: { capacity: 3, perSecond: 1 } });

      return {
        async send(chunk: OutboundChunk) {
          await limiter.acquire(ACCOUNT, chunk.chatId, ctx.signal);
          try {
            const media = chunk.media;
            // Uploads only carry content here: a file given by URL went into the text as a link (the channels module).
            if (media?.data !== undefined) return { messageId: await uploadFile(web, chunk, { ...media, data: media.data }) };
            const answer = await web.chat.postMessage({
              channel: chunk.chatId,
              text: chunk.text, // rendered to mrkdwn by the channels module (limits.format)
              ...(chunk.threadId ? { thread_ts: chunk.threadId } : {}),
              unfurl_links: false,
              unfurl_media: false,
            });
            if (!answer.ts) throw channelError('transient', 'slack: chat.postMessage answered without a ts');
            return { messageId: answer.ts };
          } catch (err) {
            const e = toChannelError(err);
            if (e.kind === 'rate_limited' && e.retryAfterMs !== undefined) limiter.retryAfter(e.retryAfterMs, ACCOUNT, chunk.chatId);
            throw e;
          }
        },
        async stop() {
          await receiving.stop();
        },
      };
    },
  };
}

/** Socket Mode: resolves once connected (or retrying a transient failure); rejects on an auth error. */
async function startSocketMode(ctx: AdapterContext, kit: ChannelKit, web: WebClient, token: string): Promise<{ stop(): Promise<void> }> {
  const appToken = ctx.secrets.app_token;
  if (!appToken) throw channelError('auth', "slack: 'app_token' (the app-level token, xapp-) is not set; Socket Mode needs it");
  const stopped = new AbortController();
  const loop = runSocketMode(ctx, kit, web, { token, appToken }, AbortSignal.any([ctx.signal, stopped.signal]));
  const stop = async () => {
    stopped.abort();
    await loop.done;
  };
  try {
    await loop.started;
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
