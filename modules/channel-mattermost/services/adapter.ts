/**
 * The Mattermost channel adapter: checks the token with GET /users/me (the bot's id and username, for mention
 * gating), then runs the WebSocket in the kit's reconnect loop (backoff with jitter, stopped only by a refused token;
 * a silent socket is torn down by the liveness watchdog). Each connection's `hello` first catches up on what was
 * posted while none was open.
 */
import type { AdapterContext, ChannelAdapter, ChannelKit } from '@talon/channels';
import type { Store } from '@talon/module-sdk';
import { mattermostFields } from '../config.ts';
import { seenCursor } from './cursor.ts';
import { channelError, isAuthFailure, toChannelError } from './errors.ts';
import type { Me } from './inbound.ts';
import { mattermostSender } from './outbound.ts';
import { Receiver } from './receive.ts';
import { mattermostRest } from './rest.ts';
import { MattermostSocket } from './socket.ts';

/** Client pings every 20 s answer with a pong: this much silence is a dead connection. */
const LIVENESS_MS = 60_000;

export function mattermostAdapter(kit: () => ChannelKit, store: () => Store): ChannelAdapter {
  return {
    name: 'mattermost',
    description: 'Mattermost (REST v4 and the WebSocket event stream; a bot account with a personal access token)',
    fields: mattermostFields,
    secretFields: [],
    urlFields: ['server_url'],
    capabilities: { threads: true, media: true, typing: true, edits: false, qr: false, platformDedup: false },
    // A post's message is at most 16,383 characters (runes) on current servers.
    limits: { maxLength: 16_383, unit: 'chars', format: 'markdown' },
    start: (ctx) => start(ctx, kit(), store()),
  };
}

async function start(ctx: AdapterContext, kit: ChannelKit, store: Store) {
  const token = ctx.secrets.token;
  if (!token) throw channelError("no access token configured (the bot account's personal access token)", 'auth');
  const root = String(ctx.config.server_url);
  const rest = mattermostRest(ctx, kit, root, token);
  const socket = new MattermostSocket(`${root.replace(/^http/, 'ws')}/api/v4/websocket`, token);

  let me: Me | undefined;
  let receiver: Receiver | undefined;
  const identify = async (): Promise<Receiver> => {
    if (receiver) return receiver;
    const { data, date } = await rest.call<Partial<Me>>('GET', '/users/me', undefined, ctx.signal);
    if (!data.id || !data.username) throw channelError('GET /users/me answered no user', 'transient');
    me = { id: data.id, username: data.username };
    const cursor = seenCursor(store, `${root} ${me.id}`);
    // The server's clock, so a skewed local clock neither skips nor replays posts.
    await cursor.initFloor(date ?? Date.now());
    receiver = new Receiver(ctx, rest, cursor, () => me!);
    return receiver;
  };
  // A refused token stops here, shown as last_error; an unreachable server is retried by the loop below.
  try {
    await identify();
  } catch (err) {
    if (isAuthFailure(err)) throw toChannelError(err);
    ctx.log.warn({ error: (err as Error).message }, 'mattermost server not reachable yet; retrying');
  }

  const loop = new kit.Reconnector({
    connect: async (link) => {
      const r = await identify();
      await socket.connect(link, { onHello: () => r.catchUp(), onEvent: (ev) => r.onEvent(ev) });
    },
    teardown: () => socket.close(),
    isAuthError: isAuthFailure,
    describe: (err) => toChannelError(err).message,
    livenessMs: LIVENESS_MS,
    signal: ctx.signal,
    onState: kit.reportHealth(ctx),
  });
  const running = loop.run().catch((err: unknown) => ctx.log.error({ error: (err as Error).message }, 'mattermost connection failed'));
  const sender = mattermostSender(rest, socket, () => me, kit, ctx.signal);
  return {
    send: sender.send,
    typing: sender.typing,
    async stop() {
      socket.close();
      await running;
    },
  };
}
