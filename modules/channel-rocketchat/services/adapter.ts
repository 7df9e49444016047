/**
 * The Rocket.Chat channel adapter: checks the token with GET /me (it must be the configured user_id's), then runs the
 * realtime API in the kit's reconnect loop (backoff with jitter, stopped only by a refused token; a silent socket is
 * torn down by the liveness watchdog). Each connection's subscription `ready` first catches up on what was sent while
 * none was open.
 */
import type { AdapterContext, ChannelAdapter, ChannelKit } from '@talon/channels';
import type { Store } from '@talon/module-sdk';
import { rocketchatFields } from '../config.ts';
import { seenCursor } from './cursor.ts';
import { RocketChatDdp } from './ddp.ts';
import { channelError, isAuthFailure, toChannelError } from './errors.ts';
import { rocketchatSender } from './outbound.ts';
import { Receiver } from './receive.ts';
import { rocketchatRest } from './rest.ts';

/** The server pings every 30 s or so: this much silence is a dead connection. */
const LIVENESS_MS = 75_000;

export function rocketchatAdapter(kit: () => ChannelKit, store: () => Store): ChannelAdapter {
  return {
    name: 'rocketchat',
    description: 'Rocket.Chat (the realtime API over a WebSocket and REST; a bot user with a personal access token)',
    fields: rocketchatFields,
    secretFields: [],
    urlFields: ['server_url'],
    capabilities: { threads: true, media: false, typing: true, edits: false, qr: false, platformDedup: true },
    // Message_MaxAllowedSize's default: 5,000 characters.
    limits: { maxLength: 5_000, unit: 'chars', format: 'markdown' },
    start: (ctx) => start(ctx, kit(), store()),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit, store: Store) {
  const token = ctx.secrets.token;
  if (!token) throw channelError("no access token configured (the bot account's personal access token)", 'auth');
  const root = String(ctx.config.server_url);
  const userId = String(ctx.config.user_id);
  const rest = rocketchatRest(ctx, kit, root, userId, token);
  const socket = new RocketChatDdp(`${root.replace(/^http/, 'ws')}/websocket`, userId, token);

  let me: { id: string; username: string } | undefined;
  let receiver: Receiver | undefined;
  const identify = async (): Promise<Receiver> => {
    if (receiver) return receiver;
    const { data, date } = await rest.call<{ _id?: string; username?: string }>('GET', '/me', undefined, ctx.signal);
    if (data._id !== userId || !data.username) throw channelError(`the access token belongs to another user than the configured user_id ${userId}`, 'auth');
    me = { id: data._id, username: data.username };
    const cursor = seenCursor(store, `${root} ${me.id}`);
    // The server's clock, so a skewed local clock neither skips nor replays posts.
    await cursor.initFloor(date ?? Date.now());
    receiver = new Receiver(ctx, rest, cursor, me.id);
    return receiver;
  };
  // A refused token stops here, shown as last_error; an unreachable server is retried by the loop below.
  try {
    await identify();
  } catch (err) {
    if (isAuthFailure(err)) throw toChannelError(err);
    ctx.log.warn({ error: (err as Error).message }, 'rocketchat server not reachable yet; retrying');
  }

  const loop = new kit.Reconnector({
    connect: async (link) => {
      const r = await identify();
      await socket.connect(link, { onReady: () => r.catchUp(), onMessage: (args) => r.onStream(args) });
    },
    teardown: () => socket.close(),
    isAuthError: isAuthFailure,
    describe: (err) => toChannelError(err).message,
    livenessMs: LIVENESS_MS,
    signal: ctx.signal,
    onState: kit.reportHealth(ctx),
  });
  const running = loop.run().catch((err: unknown) => ctx.log.error({ error: (err as Error).message }, 'rocketchat connection failed'));
  const sender = rocketchatSender(rest, socket, () => me, kit, ctx.signal);
  return {
    send: sender.send,
    typing: sender.typing,
    async stop() {
      socket.close();
      await running;
    },
  };
}
