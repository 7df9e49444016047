/**
 * One running Discord connection: REST (through the net fetch) for sends and typing, the Gateway for messages in.
 * @discordjs/ws resumes a dropped session itself (RESUME replays what the drop missed) and rebuilds a zombie one
 * (no heartbeat ACK); this file reports its state, hands each message to the inbound queue in Gateway order and stops
 * everything it started once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayDispatchEvents, GatewayIntentBits } from '@discordjs/core';
import { WebSocketShardEvents, type WebSocketShard } from '@discordjs/ws';
import type { AdapterContext, ChannelConnection } from '@talon/channels';
import { channelError, fromDiscord } from './errors.ts';
import { gatewayAllowed, OneShardStrategy, VettedGatewayManager } from './gateway.ts';
import { backoffMs, inboundQueue } from './inbound.ts';
import { discordSender, SentIds } from './outbound.ts';
import { openRest, type DiscordRest } from './rest.ts';
import { GatewaySession } from './session.ts';

/** MESSAGE_CONTENT is privileged: without it enabled in the developer portal the Gateway closes with 4014. */
const INTENTS = GatewayIntentBits.GuildMessages | GatewayIntentBits.DirectMessages | GatewayIntentBits.MessageContent;
/** Close codes after which the library gives up (it does not reconnect): the channel stops with the reason. */
const FATAL_CLOSES: Record<number, string> = {
  4004: 'Discord refused the bot token (Gateway close code 4004): set a valid token',
  4010: 'Discord refused the shard (Gateway close code 4010)',
  4011: 'Discord requires sharding for this bot (Gateway close code 4011)',
  4012: 'Discord refused the Gateway version (close code 4012)',
  4013: 'Discord refused the intents (Gateway close code 4013)',
  4014: 'Discord refused the Message Content intent (Gateway close code 4014): enable it under Bot → Privileged Gateway Intents in the developer portal',
};
/** How long a stop waits for a Gateway handshake under way (and ws's handshake timeout, which ends it anyway). */
const HANDSHAKE_MS = 10_000;

/** What the shard's events act on; `stopped` is read at each event (a stopped connection reports nothing). */
interface Wiring {
  ctx: AdapterContext;
  stopped(): boolean;
  onMessage: ReturnType<typeof inboundQueue>;
  /** A close the library will not recover from (bad token, intents). */
  onFatal(reason: string): void;
}

function wireShard(shard: WebSocketShard, w: Wiring): void {
  shard.on(WebSocketShardEvents.Dispatch, (payload) => {
    if (!w.stopped() && payload.t === GatewayDispatchEvents.MessageCreate) w.onMessage(payload.d, payload.s);
  });
  shard.on(WebSocketShardEvents.Ready, () => !w.stopped() && w.ctx.report('connected'));
  shard.on(WebSocketShardEvents.Resumed, () => !w.stopped() && w.ctx.report('connected'));
  shard.on(WebSocketShardEvents.Closed, (code) => {
    if (w.stopped()) return;
    const reason = FATAL_CLOSES[code];
    if (reason) {
      w.ctx.report('error', reason);
      w.onFatal(reason);
    } else w.ctx.report('connecting');
  });
  // The library emits fatal closes as errors too; without a listener they would throw.
  shard.on(WebSocketShardEvents.Error, (err) => w.ctx.log.warn({ err: err.message }, 'discord gateway error'));
}

/** The Gateway manager with its one shard; READY's resume_gateway_url is vetted like GET /gateway/bot's URL. */
function openGateway(token: string, rest: DiscordRest, wiringFor: (session: GatewaySession) => Wiring) {
  const session: GatewaySession = new GatewaySession((url: string): string => (gatewayAllowed(url, rest.apiUrl) ? url : gateway.vettedUrl));
  const wiring = wiringFor(session);
  let strategy: OneShardStrategy | undefined;
  const gateway: VettedGatewayManager = new VettedGatewayManager({
    token,
    intents: INTENTS,
    rest: rest.rest,
    shardCount: 1,
    handshakeTimeout: HANDSHAKE_MS,
    retrieveSessionInfo: session.retrieve,
    updateSessionInfo: session.update,
    buildStrategy: (manager) => (strategy = new OneShardStrategy(manager, (shard) => wireShard(shard, wiring))),
  }).vet(rest.apiUrl);
  return { gateway, close: (waitMs: number) => strategy?.close(waitMs) };
}

/**
 * The first connection: GET /gateway/bot can fail for a while (network, Discord); the library takes over once a session
 * is up. A stop while connecting ends the wait (the shard's connect() waits for a READY that will not come); a fatal
 * close or a refusal (bad token) ends it with last_error.
 */
async function connectFirst(ctx: AdapterContext, gateway: VettedGatewayManager, ends: Promise<unknown>, stop: () => Promise<void>, signal: AbortSignal) {
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      const outcome = await Promise.race([gateway.connect().then(() => undefined), ends]);
      if (outcome !== undefined) await stop();
      return;
    } catch (err) {
      const e = fromDiscord(err);
      if (e.kind === 'auth' || e.kind === 'permanent') {
        ctx.report('error', e.message);
        return stop();
      }
      ctx.report('connecting', e.message);
      await sleep(backoffMs(attempt), undefined, { signal }).catch(() => undefined);
    }
  }
}

export async function startDiscord(ctx: AdapterContext): Promise<ChannelConnection> {
  const token = ctx.secrets.token;
  if (!token) throw channelError('auth', 'no bot token configured');
  // Aborted by the channels module or by stop() called directly: every wait and request of this connection ends.
  const halt = new AbortController();
  const signal = AbortSignal.any([ctx.signal, halt.signal]);
  const rest = openRest(ctx, token, signal);
  const me = await rest.api.users.getCurrent(rest.request()).catch((err: unknown) => {
    rest.close();
    throw fromDiscord(err);
  });
  const sent = new SentIds();
  let stopping: Promise<void> | undefined;
  let fatal: (reason: string) => void = () => undefined;
  const fatalClose = new Promise<string>((resolve) => (fatal = resolve));
  const bot = { id: me.id, sent: sent.has };
  const { gateway, close } = openGateway(token, rest, (session) => ({
    ctx,
    stopped: () => signal.aborted,
    onMessage: inboundQueue({ ctx, session, bot, apiUrl: rest.apiUrl, signal }),
    onFatal: (reason) => fatal(reason),
  }));

  // Every caller waits for the same stop: the channels module aborts the signal and then awaits stop(), and a second
  // call that returned at once let the test end (and the fake stop) while the socket was still closing.
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      halt.abort();
      await Promise.resolve(close(HANDSHAKE_MS)).catch((err: unknown) =>
        ctx.log.warn({ err: (err as Error).message }, 'discord gateway did not close cleanly'),
      );
      rest.close();
    })());
  ctx.signal.addEventListener('abort', () => void stop(), { once: true });
  const halted = new Promise<'stopped'>((resolve) => halt.signal.addEventListener('abort', () => resolve('stopped'), { once: true }));
  void connectFirst(ctx, gateway, Promise.race([fatalClose, halted]), stop, signal);
  void fatalClose.then(() => stop());
  return { ...discordSender(rest, sent), stop };
}
