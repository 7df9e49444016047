/**
 * The Bot Connector's REST API at the conversation's serviceUrl: an activity (a message, or `typing`) POSTed to
 * v3/conversations/{conversationId}/activities, or .../activities/{replyToId} to answer one. The conversation id of
 * a channel reply chain carries `;messageid=<root>`, which is how a reply lands in the thread. Statuses: 429 with
 * Retry-After waits; 401 drops the cached token and retries with a new one; other 4xx fail the chunk; 5xx retry.
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { channelError, fetchFailure, retryAfter } from './errors.ts';
import { connectorUrl } from './service-url.ts';
import type { BotTokens } from './token.ts';

export interface Target {
  serviceUrl: string;
  conversationId: string;
  replyToId?: string;
}

/** Sends one activity; resolves with the id the connector gave it. */
export async function postActivity(ctx: AdapterContext, kit: ChannelKit, tokens: BotTokens, target: Target, activity: object): Promise<string> {
  const path = `v3/conversations/${encodeURIComponent(target.conversationId)}/activities${target.replyToId ? `/${encodeURIComponent(target.replyToId)}` : ''}`;
  const res = await ctx
    .fetch({
      url: connectorUrl(target.serviceUrl, path),
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await tokens.get()}` },
      body: JSON.stringify(activity),
      timeoutMs: 15_000,
      maxBytes: 64 * 1024,
      // The token goes to this origin only: a redirect elsewhere is not followed.
      maxRedirects: 0,
      signal: ctx.signal,
    })
    .catch((err: unknown) => {
      throw fetchFailure(err, 'the connector');
    });
  const what = `teams: the connector answered ${res.status}`;
  if (res.status === 429)
    throw channelError('rate_limited', `${what}; retrying after its Retry-After`, retryAfter(res.headers['retry-after'], kit.retryAfterMs));
  if (res.status === 401) {
    tokens.invalidate();
    throw channelError('transient', `${what}: it refused the bot's token; a new one is fetched`);
  }
  if (res.status >= 400 && res.status < 500) throw channelError('permanent', `${what} (the bot is not in the conversation, or the activity is refused)`);
  if (res.status < 200 || res.status >= 300) throw channelError('transient', what);
  return idOf(res.body) ?? '';
}

function idOf(body: Buffer): string | undefined {
  try {
    const id = (JSON.parse(body.toString('utf8')) as { id?: unknown }).id;
    return typeof id === 'string' && id ? id : undefined;
  } catch {
    return undefined;
  }
}
