/**
 * The Gotify adapter: checks both tokens at start (the client token lists the user's applications, among which the
 * application token must be), then keeps the stream up in the kit's reconnect loop and posts replies as the
 * application. A refused token stops the channel with last_error; anything else is retried with backoff.
 */
import type { AdapterContext, ChannelAdapter, ChannelConnection, ChannelKit, OutboundChunk } from '@talon/channels';
import { DEFAULT_BOT_NAME, DEFAULT_CATCH_UP_MINUTES, DEFAULT_PRIORITY, gotifyFields } from '../config.ts';
import { channelError, GotifyRest } from './rest.ts';
import { GotifyStream } from './stream.ts';

/** Gotify pings every 45 s: two missed pings and a margin mean the connection is dead. */
const LIVENESS_MS = 120_000;

export function gotifyAdapter(kit: () => ChannelKit): ChannelAdapter {
  return {
    name: 'gotify',
    description: 'Gotify push server: its message stream in, replies posted as an application',
    fields: gotifyFields,
    secretFields: ['app_token'],
    urlFields: ['url'],
    capabilities: { threads: false, media: false, typing: false, edits: false, qr: false, platformDedup: false },
    // Gotify stores any length; shorter messages read better on a phone's notification. Clients render Markdown
    // when the message says so (extras client::display).
    limits: { maxLength: 4000, unit: 'chars', format: 'markdown' },
    start: (ctx) => start(ctx, kit()),
  };
}

/** Errors cross module bundles: told by name and kind, never instanceof. */
const isAuthError = (err: unknown) => err instanceof Error && err.name === 'ChannelError' && (err as { kind?: string }).kind === 'auth';

async function start(ctx: AdapterContext, kit: ChannelKit): Promise<ChannelConnection> {
  const clientToken = ctx.secrets.token;
  const appToken = ctx.secrets.app_token;
  if (!clientToken) throw channelError("no client token set ('token')", 'auth');
  if (!appToken) throw channelError("no application token set ('app_token')", 'auth');
  const rest = new GotifyRest(ctx, kit, String(ctx.config.url).replace(/\/+$/, ''));

  const names = new Map<number, string>();
  /** Lists the user's applications (names for senders) and finds the one replies are posted as: its id. */
  const identify = async () => {
    const apps = await rest.applications(clientToken);
    const own = apps.find((a) => a.token === appToken);
    if (!own) throw channelError("the application token ('app_token') is not one of the client token's user's applications", 'auth');
    for (const a of apps) names.set(a.id, a.name);
    return own.id;
  };
  // Both tokens are checked before anything runs: a refused one stops the channel here, shown as last_error. A server
  // not reachable yet is the reconnect loop's to retry (it identifies again at every connection).
  try {
    await identify();
  } catch (err) {
    if (isAuthError(err)) throw err;
    ctx.log.warn({ error: (err as Error).message }, 'gotify not reachable yet; retrying');
  }

  const stream = new GotifyStream({
    ctx,
    rest,
    clientToken,
    identify,
    audience: {
      directApps: new Set((ctx.config.direct_apps as string[] | undefined) ?? []),
      botName: (ctx.config.bot_name as string | undefined) ?? DEFAULT_BOT_NAME,
      names,
    },
    catchUpMs: ((ctx.config.catch_up_minutes as number | undefined) ?? DEFAULT_CATCH_UP_MINUTES) * 60_000,
  });
  const loop = new kit.Reconnector({
    connect: (link) => stream.connect(link),
    teardown: () => stream.close(),
    isAuthError,
    livenessMs: LIVENESS_MS,
    signal: ctx.signal,
    onState: kit.reportHealth(ctx),
  });
  const running = loop.run().catch((err: unknown) => ctx.log.error({ error: (err as Error).message }, 'gotify stream loop failed'));
  const priority = (ctx.config.priority as number | undefined) ?? DEFAULT_PRIORITY;

  return {
    async send(chunk: OutboundChunk) {
      const posted = await rest.post(appToken, {
        title: `Re: ${names.get(Number(chunk.chatId)) ?? chunk.chatId}`,
        message: chunk.text,
        priority,
        extras: {
          'client::display': { contentType: 'text/markdown' },
          // Gotify has no recipients: the reply names the application (chat) and message it answers.
          'talon::reply': { chat_id: chunk.chatId, ...(chunk.replyTo !== undefined ? { message_id: chunk.replyTo } : {}) },
        },
      });
      return { messageId: String(posted.id) };
    },
    async stop() {
      stream.close();
      await running;
    },
  };
}
