/**
 * One running Discord connection: REST (through the net fetch) for sends and typing, the Gateway for messages in.
 * @discordjs/ws resumes a dropped session itself (RESUME replays what the drop missed) and rebuilds a zombie one
 * (no heartbeat ACK); this file reports its state, hands each message to the journal in Gateway order and keeps the
 * RESUME sequence below what is not committed yet (GatewaySession).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { API, GatewayDispatchEvents, GatewayIntentBits } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { WebSocketShardEvents, type WebSocketShard } from '@discordjs/ws';
import type { AdapterContext, ChannelConnection, InboundMessage, OutboundChunk } from '@talon/channels';
import { channelError, fromDiscord } from './errors.ts';
import { netRequest } from './fetch.ts';
import { gatewayAllowed, OneShardStrategy, VettedGatewayManager } from './gateway.ts';
import { toInbound } from './message.ts';
import { GatewaySession } from './session.ts';

export const DEFAULT_API_URL = 'https://discord.com/api';
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
/** Ids of the bot's recent messages, so a reply to one counts as a mention when Discord omits referenced_message. */
const SENT_IDS_KEPT = 1000;

/** Discord takes a nonce of at most 25 characters; the journal row's id is longer, so a digest of it stands in. */
export const discordNonce = (rowNonce: string) => createHash('sha256').update(rowNonce).digest('base64url').slice(0, 25);

const backoffMs = (attempt: number) => Math.random() * Math.min(30_000, 1_000 * 2 ** attempt);
/** How long a stop waits for a Gateway handshake under way (and ws's handshake timeout, which ends it anyway). */
const HANDSHAKE_MS = 10_000;

export async function startDiscord(ctx: AdapterContext): Promise<ChannelConnection> {
  const token = ctx.secrets.token;
  if (!token) throw channelError('auth', 'no bot token configured');
  const apiUrl = typeof ctx.config.api_url === 'string' && ctx.config.api_url ? ctx.config.api_url.replace(/\/+$/, '') : DEFAULT_API_URL;
  // Aborted by the channels module or by stop() called directly: every wait and request of this connection ends.
  const halt = new AbortController();
  const signal = AbortSignal.any([ctx.signal, halt.signal]);
  // @discordjs/rest adds an abort listener to a request's signal and never removes it: each request gets a signal of
  // its own that follows the connection's (held weakly by it), not the connection's signal itself, which would keep
  // one listener per message sent for the life of the connection.
  const request = () => ({ signal: AbortSignal.any([signal]) });
  // retries: 0 — the journal retries a failed send (with the same nonce); a 429 on a send comes back as rate_limited
  // for the journal to wait out, other routes (typing, /gateway/bot) wait inside the library.
  const rest = new REST({ api: apiUrl, retries: 0, makeRequest: netRequest(ctx), rejectOnRateLimit: (limit) => limit.route.endsWith('/messages') });
  rest.setToken(token);
  const stopRest = () => {
    rest.clearHashSweeper();
    rest.clearHandlerSweeper();
  };
  const api = new API(rest);
  const me = await api.users.getCurrent(request()).catch((err: unknown) => {
    stopRest();
    throw fromDiscord(err);
  });

  const sentIds = new Set<string>();
  const remember = (id: string) => {
    sentIds.add(id);
    if (sentIds.size > SENT_IDS_KEPT) sentIds.delete(sentIds.values().next().value!);
  };
  let stopped = false;
  let stopping: Promise<void> | undefined;
  let fatal: (reason: string) => void = () => undefined;
  const fatalClose = new Promise<string>((resolve) => (fatal = resolve));
  // READY's resume_gateway_url is vetted like GET /gateway/bot's URL; one that is not allowed resumes on the latter.
  const session: GatewaySession = new GatewaySession((url: string): string => (gatewayAllowed(url, apiUrl) ? url : gateway.vettedUrl));
  let inbound = Promise.resolve();

  /** Committed before anything else happens to the message; a failed commit is tried again, in order. */
  const commit = async (message: InboundMessage, sequence: number) => {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        await ctx.emit(message);
        break;
      } catch (err) {
        ctx.log.warn({ err: (err as Error).message, platformId: message.platformId }, 'discord message not committed; trying again');
        await sleep(backoffMs(attempt), undefined, { signal }).catch(() => undefined);
      }
    }
    session.release(sequence);
  };

  const wire = (shard: WebSocketShard) => {
    shard.on(WebSocketShardEvents.Dispatch, (payload) => {
      if (stopped || payload.t !== GatewayDispatchEvents.MessageCreate) return;
      const message = toInbound(payload.d, { id: me.id, sent: (id) => sentIds.has(id) });
      if (!message) return;
      session.hold(payload.s);
      inbound = inbound.then(() => commit(message, payload.s));
    });
    shard.on(WebSocketShardEvents.Ready, () => !stopped && ctx.report('connected'));
    shard.on(WebSocketShardEvents.Resumed, () => !stopped && ctx.report('connected'));
    shard.on(WebSocketShardEvents.Closed, (code) => {
      if (stopped) return;
      const reason = FATAL_CLOSES[code];
      if (reason) {
        ctx.report('error', reason);
        fatal(reason);
      } else ctx.report('connecting');
    });
    // The library emits fatal closes as errors too; without a listener they would throw.
    shard.on(WebSocketShardEvents.Error, (err) => ctx.log.warn({ err: err.message }, 'discord gateway error'));
  };

  let strategy: OneShardStrategy | undefined;
  const gateway: VettedGatewayManager = new VettedGatewayManager({
    token,
    intents: INTENTS,
    rest,
    shardCount: 1,
    handshakeTimeout: HANDSHAKE_MS,
    retrieveSessionInfo: session.retrieve,
    updateSessionInfo: session.update,
    buildStrategy: (manager) => (strategy = new OneShardStrategy(manager, wire)),
  }).vet(apiUrl);

  // Every caller waits for the same stop: the channels module aborts the signal and then awaits stop(), and a second
  // call that returned at once let the test end (and the fake stop) while the socket was still closing.
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      stopped = true;
      halt.abort();
      try {
        await strategy?.close(HANDSHAKE_MS);
      } catch (err) {
        ctx.log.warn({ err: (err as Error).message }, 'discord gateway did not close cleanly');
      }
      stopRest();
    })());
  ctx.signal.addEventListener('abort', () => void stop(), { once: true });
  const halted = new Promise<'stopped'>((resolve) => halt.signal.addEventListener('abort', () => resolve('stopped'), { once: true }));

  // The first connection: GET /gateway/bot can fail for a while (network, Discord); the library takes over once
  // a session is up. A fatal close (bad token, intents) ends it with last_error.
  void (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        // A stop while connecting ends the wait: the shard's connect() waits for a READY that will not come.
        const outcome = await Promise.race([gateway.connect().then(() => undefined), fatalClose, halted]);
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
  })();
  void fatalClose.then(() => stop());

  return {
    async send(chunk: OutboundChunk) {
      try {
        const message = await api.channels.createMessage(
          chunk.threadId ?? chunk.chatId,
          {
            content: chunk.text,
            // The row's nonce with enforce_nonce: a chunk re-sent after a crash returns the message it created.
            nonce: discordNonce(chunk.nonce),
            enforce_nonce: true,
            // Model output never pings: no @everyone, roles or users, and a reply does not notify its author.
            allowed_mentions: { parse: [], replied_user: false },
            ...(chunk.replyTo ? { message_reference: { message_id: chunk.replyTo, fail_if_not_exists: false } } : {}),
          },
          request(),
        );
        remember(message.id);
        return { messageId: message.id };
      } catch (err) {
        throw fromDiscord(err);
      }
    },
    async typing(target) {
      await api.channels.showTyping(target.threadId ?? target.chatId, request()).catch((err: unknown) => {
        throw fromDiscord(err);
      });
    },
    stop,
  };
}
