/**
 * The Slack adapter: Socket Mode in (no public URL: the bot opens the socket), chat.postMessage out. Built on the two
 * official packages Bolt itself runs on, @slack/socket-mode and @slack/web-api, without Bolt: Bolt's App owns its
 * receiver, its own reconnects, and acks on its own schedule, where this adapter must ack only after the journal's
 * commit and leave reconnecting to the channels kit; Bolt's routing and listeners would go unused.
 */
import { WebClient } from '@slack/web-api';
import type { ChannelAdapter, ChannelKit, OutboundChunk } from '@talon/channels';
import { channelError, toChannelError } from './errors.ts';
import { runSocketMode } from './socket.ts';
import { clientOptions, slackLogger } from './web.ts';

/** The limiter's account key: one adapter is one workspace. */
const ACCOUNT = 'slack';

export function slackAdapter(kit: ChannelKit): ChannelAdapter {
  return {
    name: 'slack',
    description: 'Slack workspace through Socket Mode: DMs, channel @mentions and threads',
    fields: {
      type: 'object',
      properties: {
        app_token: { type: 'string', pattern: '^xapp-', description: 'the app-level token (xapp-) with connections:write, for Socket Mode' },
        api_url: { type: 'string', pattern: '^https?://', description: 'the Web API root; default https://slack.com/api/' },
      },
    },
    secretFields: ['app_token'],
    urlFields: ['api_url'],
    // No typing: Slack shows a typing indicator for bots only through the legacy RTM API, not Socket Mode or the Web API.
    capabilities: { threads: true, media: false, typing: false, edits: false, qr: false, platformDedup: false },
    // Slack takes 40,000 characters of text; it truncates past 4,000 in display, and shorter messages read better.
    limits: { maxLength: 3_000, unit: 'utf16', format: 'slack_mrkdwn' },

    async start(ctx) {
      const token = ctx.secrets.token;
      const appToken = ctx.secrets.app_token;
      if (!token) throw channelError('auth', "slack: 'token' (the bot token, xoxb-) is not set");
      if (!appToken) throw channelError('auth', "slack: 'app_token' (the app-level token, xapp-) is not set");
      const web = new WebClient(token, { ...clientOptions(ctx), logger: slackLogger(ctx.log) });
      const stopped = new AbortController();
      const loop = runSocketMode(ctx, kit, web, appToken, AbortSignal.any([ctx.signal, stopped.signal]));
      try {
        await loop.started;
      } catch (err) {
        stopped.abort();
        await loop.done;
        throw err;
      }
      // chat.postMessage is limited to about one message a second per channel, with short bursts (Slack's docs).
      const limiter = new kit.SendLimiter({ account: { capacity: 20, perSecond: 5 }, chat: { capacity: 3, perSecond: 1 } });

      return {
        async send(chunk: OutboundChunk) {
          await limiter.acquire(ACCOUNT, chunk.chatId, ctx.signal);
          try {
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
          stopped.abort();
          await loop.done;
        },
      };
    },
  };
}
