/**
 * The Teams adapter over the Bot Framework's REST protocol: activities come in at the messages route (the JWT checked
 * first, services/jwt.ts), replies and typing go to the conversation's connector with a client-credentials token.
 * Nothing stays open, so there is nothing to reconnect: starting fetches a token (wrong credentials stop the channel
 * with last_error) and reads the signing keys, then hands the route its receiver. Written on jose rather than the
 * botbuilder SDK, whose CloudAdapter owns the HTTP response and its own fetch: here the 2xx must wait for the
 * journal commit and every request must go through the net module's fetch.
 */
import type { AdapterContext, ChannelAdapter, ChannelKit, OutboundChunk } from '@talon/channels';
import type { Store } from '@talon/module-sdk';
import { DEFAULT_OPENID_URL, DEFAULT_SERVICE_URL, DEFAULT_TOKEN_URL, teamsFields } from '../config.ts';
import { activityIdOf, joinConversation } from './activity.ts';
import { postActivity } from './connector.ts';
import { conversations, type Conversations } from './conversations.ts';
import { channelError, fetchFailure } from './errors.ts';
import { BotFrameworkKeys } from './keys.ts';
import { receiver, type TeamsEndpoint } from './receiver.ts';
import { serviceUrlPolicy, serviceUrlProblem } from './service-url.ts';
import { BotTokens } from './token.ts';

/** The limiter's account key: one adapter is one bot. */
const ACCOUNT = 'teams';

export function teamsAdapter(kit: () => ChannelKit, store: () => Store, endpoint: TeamsEndpoint): ChannelAdapter {
  return {
    name: 'teams',
    description: 'Microsoft Teams through the Bot Framework: personal chats, group chats and channel @mentions, channel reply chains as threads, typing',
    fields: teamsFields,
    secretFields: [],
    urlFields: ['openid_url', 'token_url', 'service_url', 'service_url_allow'],
    // Files need Teams' file consent cards (personal chats) or Graph (channels): not done, files go out as links.
    capabilities: { threads: true, media: false, typing: true, edits: false, qr: false, platformDedup: false },
    // Teams takes about 28 KB of a message; shorter messages read better, as on the other platforms.
    limits: { maxLength: 4000, unit: 'chars', format: 'markdown' },
    start: (ctx) => start(ctx, kit(), conversations(store()), endpoint),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit, known: Conversations, endpoint: TeamsEndpoint) {
  const password = ctx.secrets.token;
  if (!password) throw channelError('auth', "teams: 'token' (the bot's app password, a client secret of its app registration) is not set");
  const appId = String(ctx.config.app_id);
  const policy = serviceUrlPolicy(ctx.config);
  const fallback = stringOr(ctx.config.service_url, DEFAULT_SERVICE_URL);
  const fallbackProblem = serviceUrlProblem(fallback, policy);
  if (fallbackProblem) throw channelError('permanent', `teams: service_url: ${fallbackProblem}`);
  const tokens = new BotTokens(ctx, kit, { url: stringOr(ctx.config.token_url, DEFAULT_TOKEN_URL), appId, password });
  await tokens.get();
  const keys = new BotFrameworkKeys(stringOr(ctx.config.openid_url, DEFAULT_OPENID_URL), (url) => getJson(ctx, url));
  await keys.load().catch((err: Error) => {
    throw channelError('transient', err.message);
  });
  const mine = receiver(ctx, keys, known, policy);
  endpoint.current = mine;
  ctx.report('connected');
  // Microsoft's per-conversation limit is about 7 messages a second with bursts, and 50 a second per bot.
  const limiter = new kit.SendLimiter({ account: { capacity: 50, perSecond: 50 }, chat: { capacity: 7, perSecond: 3 } });

  /** Where a chat is answered: the serviceUrl its activities came with (else service_url), if the allowlist takes it. */
  async function serviceUrlOf(chatId: string): Promise<string> {
    const serviceUrl = (await known.serviceUrl(chatId)) ?? fallback;
    const problem = serviceUrlProblem(serviceUrl, policy);
    if (problem) throw channelError('permanent', `teams: ${problem}`);
    return serviceUrl;
  }

  return {
    async send(chunk: OutboundChunk) {
      const serviceUrl = await serviceUrlOf(chunk.chatId);
      await limiter.acquire(ACCOUNT, chunk.chatId, ctx.signal);
      const target = {
        serviceUrl,
        conversationId: joinConversation(chunk.chatId, chunk.threadId),
        ...(chunk.replyTo ? { replyToId: activityIdOf(chunk.replyTo) } : {}),
      };
      try {
        const id = await postActivity(ctx, kit, tokens, target, { type: 'message', text: chunk.text, textFormat: 'markdown' });
        return { messageId: id || chunk.nonce };
      } catch (err) {
        const e = err as { kind?: string; retryAfterMs?: number };
        if (e.kind === 'rate_limited' && e.retryAfterMs !== undefined) limiter.retryAfter(e.retryAfterMs, ACCOUNT, chunk.chatId);
        throw err;
      }
    },
    async typing(target: { chatId: string; threadId?: string }) {
      const serviceUrl = await serviceUrlOf(target.chatId);
      await postActivity(ctx, kit, tokens, { serviceUrl, conversationId: joinConversation(target.chatId, target.threadId) }, { type: 'typing' });
    },
    async stop() {
      if (endpoint.current === mine) endpoint.current = undefined;
    },
  };
}

const stringOr = (value: unknown, fallback: string) => (typeof value === 'string' && value ? value : fallback);

async function getJson(ctx: AdapterContext, url: string): Promise<unknown> {
  const res = await ctx.fetch({ url, timeoutMs: 15_000, maxBytes: 256 * 1024, signal: ctx.signal }).catch((err: unknown) => {
    throw fetchFailure(err, url);
  });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return JSON.parse(res.body.toString('utf8')) as unknown;
}
