/**
 * The Zulip channel adapter: checks the bot's email and API key with GET /users/me (the key must belong to the
 * configured bot_email) and reads its full name for mention gating, then runs the event queue's long polling in the
 * kit's reconnect loop (backoff with jitter, stopped only by refused credentials; a silent poll is torn down by the
 * liveness watchdog). Every call goes through the context's net fetch.
 */
import type { AdapterContext, ChannelAdapter, ChannelKit } from '@talon/channels';
import type { Store } from '@talon/module-sdk';
import { zulipFields } from '../config.ts';
import { zulipClient } from './client.ts';
import { queueCursor } from './cursor.ts';
import { channelError, isAuthFailure, toChannelError } from './errors.ts';
import type { Me } from './inbound.ts';
import { zulipSender } from './outbound.ts';
import { POLL_TIMEOUT_MS, QueuePoller } from './queue.ts';

/** Longer than a poll may last: this much silence is a dead connection. */
const LIVENESS_MS = POLL_TIMEOUT_MS + 30_000;

export function zulipAdapter(kit: () => ChannelKit, store: () => Store): ChannelAdapter {
  return {
    name: 'zulip',
    description: 'Zulip (REST API, event queue long polling; direct messages and streams with topics)',
    fields: zulipFields,
    secretFields: [],
    urlFields: ['server_url'],
    capabilities: { threads: true, media: true, typing: true, edits: false, qr: false, platformDedup: false },
    // Zulip refuses a message over 10,000 characters (code points).
    limits: { maxLength: 10_000, unit: 'chars', format: 'markdown' },
    start: (ctx) => start(ctx, kit(), store()),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit, store: Store) {
  const token = ctx.secrets.token;
  if (!token) throw channelError("no API key configured (the bot's API key as token)", 'auth');
  const root = String(ctx.config.server_url);
  const email = String(ctx.config.bot_email);
  const listed = Array.isArray(ctx.config.streams) ? (ctx.config.streams as string[]) : [];
  const streams = listed.length ? new Set(listed.map((s) => s.toLowerCase())) : undefined;
  const client = zulipClient(ctx, kit, root, email, token);

  let me: Me | undefined;
  /** GET /users/me: refused credentials or another account's key are an auth error. */
  const identify = async () => {
    if (me) return me;
    const who = await client.call<{ user_id?: number; full_name?: string; email?: string }>('GET', '/users/me', {}, { signal: ctx.signal });
    if (typeof who.user_id !== 'number') throw channelError('the Zulip server answered /users/me with no user_id', 'transient');
    if (who.email && who.email.toLowerCase() !== email.toLowerCase())
      throw channelError(`the API key belongs to ${who.email}, not to the configured bot_email ${email}`, 'auth');
    me = { id: who.user_id, fullName: who.full_name ?? email };
    return me;
  };
  // Refused credentials stop here, shown as last_error; an unreachable server is retried by the loop below.
  try {
    await identify();
  } catch (err) {
    if (isAuthFailure(err)) throw toChannelError(err);
    ctx.log.warn({ error: (err as Error).message }, 'zulip server not reachable yet; retrying');
  }

  const poller = new QueuePoller(ctx, client, queueCursor(store, `${root} ${email.toLowerCase()}`), () => ({
    ctx,
    client,
    me: me!,
    ...(streams ? { streams } : {}),
  }));
  const loop = new kit.Reconnector({
    connect: async (link) => {
      await identify();
      await poller.connect(link);
    },
    // The poll's fetch is aborted with its link's signal: nothing else stays open.
    teardown: () => undefined,
    isAuthError: isAuthFailure,
    describe: (err) => (isAuthFailure(err) ? toChannelError(err).message : ((err as Error).message ?? String(err))),
    livenessMs: LIVENESS_MS,
    signal: ctx.signal,
    onState: kit.reportHealth(ctx),
  });
  const running = loop.run().catch((err: unknown) => ctx.log.error({ error: (err as Error).message }, 'zulip event queue failed'));
  const sender = zulipSender(client, kit, ctx.signal);
  return {
    send: sender.send,
    typing: sender.typing,
    async stop() {
      await running;
    },
  };
}
