/**
 * The Telegram channel adapter: checks the token with getMe, then runs, in the kit's reconnect loop (backoff with
 * jitter, stopped only by a refused token), either the getUpdates poller (a silent poll is torn down by the liveness
 * watchdog) or, in webhook mode, a setWebhook whose updates arrive through the module's route; sends through grammY's
 * Api. Every Bot API call and file download goes through the context's net fetch.
 */
import type { UserFromGetMe } from 'grammy/types';
import type { AdapterContext, ChannelAdapter, ChannelKit } from '@talon/channels';
import { DEFAULT_API_URL, telegramFields, WEBHOOK_ROUTE } from '../config.ts';
import { apiSignal, POLL_SECONDS, telegramApi } from './client.ts';
import { channelError, describe, isAuthFailure, isConflict } from './errors.ts';
import { telegramSender } from './outbound.ts';
import { Poller } from './poller.ts';
import { randomSecret, Webhook, type TelegramEndpoint } from './webhook.ts';

/** Longer than a long poll: an idle poll answers within POLL_SECONDS, so this much silence is a dead connection. */
const LIVENESS_MS = (POLL_SECONDS + 35) * 1000;
/** Webhook mode has no stream that must keep talking (an idle bot hears nothing): no watchdog, in effect. */
const WEBHOOK_LIVENESS_MS = 2 ** 31 - 1;

export function telegramAdapter(kit: () => ChannelKit, endpoint: TelegramEndpoint = {}): ChannelAdapter {
  return {
    name: 'telegram',
    description: 'Telegram bot (Bot API long polling, or a webhook)',
    fields: telegramFields,
    secretFields: ['webhook_secret'],
    urlFields: ['api_url'],
    capabilities: { threads: true, media: true, typing: true, edits: false, qr: false, platformDedup: false },
    limits: { maxLength: 4096, unit: 'utf16', format: 'telegram_html' },
    start: (ctx) => start(ctx, kit(), endpoint),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit, endpoint: TelegramEndpoint) {
  const token = ctx.secrets.token;
  if (!token) throw channelError('no bot token configured (from @BotFather)', 'auth');
  const apiRoot = typeof ctx.config.api_url === 'string' ? ctx.config.api_url : DEFAULT_API_URL;
  let webhookUrl: string | undefined;
  if (ctx.config.mode === 'webhook') {
    if (typeof ctx.config.webhook_url !== 'string')
      throw channelError(`mode "webhook" needs webhook_url: the public URL of this service's POST ${WEBHOOK_ROUTE}`, 'permanent');
    webhookUrl = ctx.config.webhook_url;
  }
  const api = telegramApi(ctx, token, apiRoot);

  let me: UserFromGetMe | undefined;
  const identify = async () => (me ??= await api.getMe(apiSignal(ctx.signal)));
  // A refused token stops here, shown as last_error; an unreachable server is retried by the loop below.
  try {
    await identify();
    // A webhook left set (webhook mode before) answers every getUpdates with 409; grammY's polling removes it too.
    if (webhookUrl === undefined) await api.deleteWebhook({}, apiSignal(ctx.signal));
  } catch (err) {
    if (isAuthFailure(err)) throw channelError(describe(err, token), 'auth', undefined, err);
    ctx.log.warn({ error: describe(err, token) }, 'telegram not reachable yet; retrying');
  }

  let conflict = false;
  let previous: string | undefined;
  const files = { api, ctx, fileRoot: `${apiRoot}/file/bot${token}/` };
  // Without a configured secret a new one is given to Telegram at each start: nothing needs to keep it.
  const webhook =
    webhookUrl === undefined
      ? undefined
      : new Webhook({ api, files, me: identify, url: webhookUrl, secret: ctx.secrets.webhook_secret ?? randomSecret(), endpoint });
  const poller = new Poller({ api, files, me: identify });
  const loop = new kit.Reconnector({
    connect: (link) => (webhook ? webhook.connect(link) : poller.connect(link)),
    // The poll's fetch is aborted with its link's signal: nothing else stays open.
    teardown: () => undefined,
    isAuthError: isAuthFailure,
    describe: (err) => {
      conflict = isConflict(err);
      return describe(err, token);
    },
    livenessMs: webhook ? WEBHOOK_LIVENESS_MS : LIVENESS_MS,
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
      webhook?.release();
      await running;
    },
  };
}
