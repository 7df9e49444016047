/**
 * The Matrix channel adapter: checks the access token with whoami (it must belong to the configured user_id), reads
 * the bot's display name for mention gating, then runs the /sync loop in the kit's reconnect loop (backoff with
 * jitter, stopped only by a refused token; a silent sync is torn down by the liveness watchdog). Every call goes
 * through the context's net fetch.
 */
import type { AdapterContext, ChannelAdapter, ChannelKit } from '@talon/channels';
import type { Store } from '@talon/module-sdk';
import { matrixFields } from '../config.ts';
import { enc, matrixClient, SYNC_TIMEOUT_MS } from './client.ts';
import { syncCursor } from './cursor.ts';
import { channelError, isAuthFailure, MatrixError, toChannelError } from './errors.ts';
import { matrixSender } from './outbound.ts';
import { Rooms } from './rooms.ts';
import { Syncer } from './sync.ts';

/** Longer than a long poll: an idle sync answers within SYNC_TIMEOUT_MS, so this much silence is a dead connection. */
const LIVENESS_MS = SYNC_TIMEOUT_MS + 35_000;

export function matrixAdapter(kit: () => ChannelKit, store: () => Store): ChannelAdapter {
  return {
    name: 'matrix',
    description: 'Matrix (client-server API, /sync long polling; unencrypted rooms)',
    fields: matrixFields,
    secretFields: [],
    urlFields: ['homeserver_url'],
    capabilities: { threads: true, media: true, typing: true, edits: false, qr: false, platformDedup: true },
    // An event is at most 64 KiB of JSON and carries the text twice (plain and HTML).
    limits: { maxLength: 16_000, unit: 'bytes', format: 'telegram_html' },
    start: (ctx) => start(ctx, kit(), store()),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit, store: Store) {
  const token = ctx.secrets.token;
  if (!token) throw channelError("no access token configured (the bot account's access token)", 'auth');
  const root = String(ctx.config.homeserver_url);
  const userId = String(ctx.config.user_id);
  const client = matrixClient(ctx, kit, root, token);

  let displayName: string | undefined;
  let checked = false;
  /** whoami and the display name; a refused token or another account's token is an auth error. */
  const identify = async () => {
    if (checked) return;
    const who = await client.call<{ user_id?: string }>('GET', '/account/whoami', undefined, { signal: ctx.signal });
    if (who.user_id !== userId) throw channelError(`the access token belongs to ${who.user_id ?? 'no user'}, not to the configured user_id ${userId}`, 'auth');
    try {
      const profile = await client.call<{ displayname?: string }>('GET', `/profile/${enc(userId)}/displayname`, undefined, { signal: ctx.signal });
      displayName = profile.displayname || undefined;
    } catch (err) {
      if (!(err instanceof MatrixError) || err.status !== 404) throw err;
    }
    checked = true;
  };
  const isAuth = (err: unknown) => isAuthFailure(err) || (err instanceof Error && err.name === 'ChannelError' && (err as { kind?: string }).kind === 'auth');
  // A refused token stops here, shown as last_error; an unreachable homeserver is retried by the loop below.
  try {
    await identify();
  } catch (err) {
    if (isAuth(err)) throw toChannelError(err);
    ctx.log.warn({ error: (err as Error).message }, 'matrix homeserver not reachable yet; retrying');
  }

  const rooms = new Rooms(client, userId, ctx.signal);
  const syncer = new Syncer(ctx, client, rooms, syncCursor(store, `${root} ${userId}`), { ctx, client, rooms, displayName: () => displayName });
  const loop = new kit.Reconnector({
    connect: async (link) => {
      await identify();
      await syncer.connect(link);
    },
    // The sync's fetch is aborted with its link's signal: nothing else stays open.
    teardown: () => undefined,
    isAuthError: isAuth,
    describe: (err) => (isAuth(err) ? toChannelError(err).message : ((err as Error).message ?? String(err))),
    livenessMs: LIVENESS_MS,
    signal: ctx.signal,
    onState: kit.reportHealth(ctx),
  });
  const running = loop.run().catch((err: unknown) => ctx.log.error({ error: (err as Error).message }, 'matrix sync failed'));
  const sender = matrixSender(client, rooms, kit, ctx.signal);
  return {
    send: sender.send,
    typing: sender.typing,
    async stop() {
      await running;
    },
  };
}
