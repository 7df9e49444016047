/**
 * Receiving: one Socket Mode connection at a time inside the kit's reconnect loop. Each connection checks the bot
 * token (auth.test gives the bot's user id, which mention detection needs), asks apps.connections.open for a one-use
 * socket URL with the app token, and runs until Slack closes it (a `disconnect` frame such as refresh_requested, a
 * drop, the library's ping/pong keepalive giving up). The library's own reconnecting is off: the loop is the one
 * place that reconnects, with jittered backoff, and stops only on an auth error.
 *
 * An envelope is acked by its envelope_id only after the journal committed its message (emit resolved). An envelope
 * whose commit failed is left unacked, so Slack sends it again (retry_attempt + 1); a redelivered one is found in the
 * journal (duplicate) and acked then. A connection closing between the commit and the ack loses nothing either.
 */
import { SocketModeClient } from '@slack/socket-mode';
import type { WebClient } from '@slack/web-api';
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { channelError, describeError, isAuthError } from './errors.ts';
import type { SlackMessageEvent } from './events.ts';
import { readEvent } from './files.ts';
import { apiUrlOf, clientOptions, slackLogger } from './web.ts';

/**
 * The kit's watchdog is a backstop only: the library pings Slack every few seconds and closes a link whose pongs (or
 * Slack's pings) stop, which ends the connection at once. A quiet workspace sends no frames for hours, so the watchdog
 * waits long; Slack refreshes Socket Mode connections itself every few hours anyway, and a reconnect loses nothing.
 */
const LIVENESS_MS = 2 * 60 * 60 * 1000;

interface SlackEventArgs {
  type: string;
  envelope_id?: string;
  body?: { event?: SlackMessageEvent; team_id?: string };
  retry_num?: number;
  ack(response?: Record<string, unknown>): Promise<void>;
}

export interface SocketModeLoop {
  /** Settles on the first outcome: resolves once connected or retrying, rejects on an auth error. */
  started: Promise<void>;
  /** Settles when the loop has stopped (aborted, or an auth error). */
  done: Promise<unknown>;
}

export interface SocketModeTokens {
  /** The bot token: the file downloads' credential. */
  token: string;
  appToken: string;
}

export function runSocketMode(ctx: AdapterContext, kit: ChannelKit, web: WebClient, tokens: SocketModeTokens, signal: AbortSignal): SocketModeLoop {
  const { appToken } = tokens;
  let current: SocketModeClient | undefined;
  let settle: (error?: Error) => void = () => undefined;
  const started = new Promise<void>((resolve, reject) => {
    settle = (error) => {
      settle = () => undefined;
      if (error) reject(error);
      else resolve();
    };
  });

  async function connect(link: { ready(): void; traffic(): void; signal: AbortSignal }): Promise<void> {
    const me = await web.auth.test();
    const bot = { userId: String(me.user_id ?? ''), ...(me.team_id ? { teamId: me.team_id } : {}) };
    const client = new SocketModeClient({ appToken, autoReconnectEnabled: false, logger: slackLogger(ctx.log), clientOptions: clientOptions(ctx) });
    current = client;
    client.on('connected', () => link.ready()); // Slack's `hello`, not the socket opening
    client.on('slack_event', (args: SlackEventArgs) => {
      link.traffic();
      void deliver(args, bot);
    });
    await new Promise<void>((resolve, reject) => {
      client.once('disconnected', () => resolve());
      link.signal.addEventListener('abort', () => void client.disconnect(), { once: true });
      client.start().catch((err: unknown) => reject(err ?? new Error('slack: the socket closed before hello')));
    });
  }

  async function deliver(args: SlackEventArgs, bot: { userId: string; teamId?: string }): Promise<void> {
    const event = args.type === 'events_api' ? args.body?.event : undefined;
    if (event) {
      try {
        // A file download failing (network, 5xx) leaves the envelope unacked as a failed commit does.
        const message = await readEvent({ ctx, bot, token: tokens.token, apiUrl: apiUrlOf(ctx) }, event);
        if (message) await ctx.emit(message);
      } catch (err) {
        ctx.log.warn({ envelope: args.envelope_id, error: describeError(err) }, 'slack message not committed; left unacked for Slack to send again');
        return;
      }
    }
    // Envelopes carrying nothing to read (edits, bot posts, interactivity) are acked as well, so Slack stops resending.
    await args
      .ack()
      .catch((err: unknown) =>
        ctx.log.info({ envelope: args.envelope_id, error: describeError(err) }, 'slack ack not sent (socket closed); the redelivery is dropped by the journal'),
      );
  }

  const loop = new kit.Reconnector({
    connect,
    teardown: async () => {
      const client = current;
      current = undefined;
      if (!client) return;
      await client.disconnect();
      client.removeAllListeners();
    },
    isAuthError,
    describe: describeError,
    livenessMs: LIVENESS_MS,
    signal,
    onState: (health) => {
      if (health.state === 'connecting') ctx.report('connecting');
      if (health.state === 'ready') {
        ctx.report('connected');
        settle();
      }
      if (health.state === 'waiting') {
        ctx.report('connecting', health.lastError ?? undefined);
        settle();
      }
      if (health.state === 'stopped') {
        const reason = health.lastError ?? 'slack: authentication failed';
        ctx.report('error', reason);
        settle(channelError('auth', reason));
      }
    },
  });
  const done = loop.run().finally(() => settle());
  return { started, done };
}
