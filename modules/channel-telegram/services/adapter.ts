/**
 * The Telegram channel adapter: checks the token with getMe, then runs the getUpdates poller in the kit's reconnect
 * loop (backoff with jitter, stopped only by a refused token; a silent poll is torn down by the liveness watchdog) and
 * sends through grammY's Api. Every Bot API call and file download goes through the context's net fetch.
 */
import type { UserFromGetMe } from 'grammy/types';
import type { AdapterContext, ChannelAdapter, ChannelKit } from '@talon/channels';
import { DEFAULT_API_URL, telegramFields } from '../config.ts';
import { apiSignal, POLL_SECONDS, telegramApi } from './client.ts';
import { channelError, describe, isAuthFailure, isConflict } from './errors.ts';
import { telegramSender } from './outbound.ts';
import { Poller } from './poller.ts';

/** Longer than a long poll: an idle poll answers within POLL_SECONDS, so this much silence is a dead connection. */
const LIVENESS_MS = (POLL_SECONDS + 35) * 1000;

export function telegramAdapter(kit: () => ChannelKit): ChannelAdapter {
  return {
    name: 'telegram',
    description: 'Telegram bot (Bot API long polling)',
    fields: telegramFields,
    secretFields: [],
    urlFields: ['api_url'],
    capabilities: { threads: true, media: true, typing: true, edits: false, qr: false, platformDedup: false },
    limits: { maxLength: 4096, unit: 'utf16', format: 'telegram_html' },
    start: (ctx) => start(ctx, kit()),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit) {
  const token = ctx.secrets.token;
  if (!token) throw channelError('no bot token configured (from @BotFather)', 'auth');
  const apiRoot = typeof ctx.config.api_url === 'string' ? ctx.config.api_url : DEFAULT_API_URL;
  const api = telegramApi(ctx, token, apiRoot);

  let me: UserFromGetMe | undefined;
  const identify = async () => (me ??= await api.getMe(apiSignal(ctx.signal)));
  // A refused token stops here, shown as last_error; an unreachable server is retried by the loop below.
  try {
    await identify();
    // A webhook left set would answer every getUpdates with 409; grammY's own polling removes it the same way.
    await api.deleteWebhook({}, apiSignal(ctx.signal));
  } catch (err) {
    if (isAuthFailure(err)) throw channelError(describe(err, token), 'auth', undefined, err);
    ctx.log.warn({ error: describe(err, token) }, 'telegram not reachable yet; retrying');
  }

  let conflict = false;
  let previous: string | undefined;
  const poller = new Poller({ api, files: { api, ctx, fileRoot: `${apiRoot}/file/bot${token}/` }, me: identify });
  const loop = new kit.Reconnector({
    connect: (link) => poller.connect(link),
    // The poll's fetch is aborted with its link's signal: nothing else stays open.
    teardown: () => undefined,
    isAuthError: isAuthFailure,
    describe: (err) => {
      conflict = isConflict(err);
      return describe(err, token);
    },
    livenessMs: LIVENESS_MS,
    signal: ctx.signal,
    onState(health) {
      // Called on every change, an error noted while still 'ready' too: act on changes of state only.
      if (health.state === previous) return;
      previous = health.state;
      if (health.state === 'ready') {
        conflict = false;
        ctx.report('connected');
      } else if (health.state === 'stopped') ctx.report('error', health.lastError ?? 'stopped');
      // A second poller is an operator's mistake, not a network blip: shown as an error while the loop keeps trying
      // (the other process may stop), where a transient failure shows as reconnecting.
      else if (health.state === 'waiting') ctx.report(conflict ? 'error' : 'connecting', health.lastError ?? undefined);
    },
  });
  const running = loop.run().catch((err: unknown) => ctx.log.error({ error: describe(err, token) }, 'telegram poller failed'));
  const sender = telegramSender(api, token, kit, ctx.signal);
  return {
    send: sender.send,
    typing: sender.typing,
    async stop() {
      await running;
    },
  };
}
