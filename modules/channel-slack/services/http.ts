/**
 * HTTP mode: Slack POSTs Events API requests to the service's own HTTP server (routes/events.ts) instead of the bot
 * opening a socket. Starting checks the bot token (auth.test gives the bot's user id for mention detection) and hands
 * the events route a receiver; nothing stays open, so there is nothing to reconnect. The route verifies each request's
 * signature with `signing_secret` before the receiver sees it, and answers 200 only once the journal committed it.
 */
import type { WebClient } from '@slack/web-api';
import type { AdapterContext, EmitResult } from '@talon/channels';
import { channelError, toChannelError } from './errors.ts';
import type { SlackMessageEvent } from './events.ts';
import { readEvent } from './files.ts';
import { apiUrlOf } from './web.ts';

/** The running HTTP-mode adapter as the events route sees it (absent while the channel is stopped or in Socket Mode). */
export interface SlackEndpoint {
  current?: {
    signingSecret: string;
    /** Commits the event's message (resolved once committed or found a duplicate); undefined: nothing to hear. */
    receive(event: SlackMessageEvent): Promise<EmitResult | undefined>;
  };
}

export async function startHttpMode(ctx: AdapterContext, web: WebClient, token: string, endpoint: SlackEndpoint): Promise<{ stop(): void }> {
  const signingSecret = ctx.secrets.signing_secret;
  if (!signingSecret) throw channelError('auth', "slack: 'signing_secret' (Basic Information → Signing Secret) is not set; HTTP mode needs it");
  const me = await web.auth.test().catch((err: unknown) => {
    throw toChannelError(err);
  });
  const reader = { ctx, token, apiUrl: apiUrlOf(ctx), bot: { userId: String(me.user_id ?? ''), ...(me.team_id ? { teamId: me.team_id } : {}) } };
  const mine: NonNullable<SlackEndpoint['current']> = {
    signingSecret,
    async receive(event) {
      const message = await readEvent(reader, event);
      return message ? ctx.emit(message) : undefined;
    },
  };
  endpoint.current = mine;
  ctx.report('connected');
  return {
    stop() {
      if (endpoint.current === mine) endpoint.current = undefined;
    },
  };
}
