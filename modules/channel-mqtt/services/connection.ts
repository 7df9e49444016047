/**
 * One MQTT channel's connection: an mqtt.js client per attempt, run inside the channels kit's reconnect loop (mqtt.js's
 * own reconnecting is off). MQTT 3.1.1 with clean session false and a stable client id: the broker keeps the
 * subscription and queues QoS 1 messages while the bot is offline, and re-sends a message whose PUBACK it never got.
 * That PUBACK goes only once the journal committed the message: mqtt.js sends it when `handleMessage`'s callback is
 * called (one message at a time, in the broker's order), so the callback waits for `emit`; a failed commit closes the
 * connection unacknowledged and the broker delivers the message again on the next one. Ready is the SUBACK of the
 * bot's subscription; liveness is any packet from the broker (PINGRESP every keepalive at least). mqtt.js opens its own
 * TCP/TLS/WebSocket connection, so this traffic does not go through the net module: the only host it reaches is the
 * configured `url`'s.
 */
import type * as Mqtt from 'mqtt';
import type { AdapterContext, ChannelConnection, ChannelKit, OutboundChunk } from '@talon/channels';
import type { MqttSettings } from '../config.ts';
import { channelError, isAuthError } from './errors.ts';
import { toInbound, toPublish } from './messages.ts';

export interface MqttTuning {
  /** Seconds between PINGREQs when nothing else is sent; the connection is rebuilt after three without a packet. */
  keepaliveS: number;
  /** How long a send waits for a connection being rebuilt, and for the broker's PUBACK, before it fails as transient. */
  readyWaitMs: number;
}

/** CONNACK codes of refused credentials (3.1.1: 4, 5; 5.0: 134, 135): retrying cannot fix them. */
const AUTH_CODES = new Set([4, 5, 134, 135]);
/** How long stopping waits for the broker connection to close. */
const CLOSE_WAIT_MS = 2_000;

interface Live {
  client: Mqtt.MqttClient;
  /** Rejects when this connection ends: a publish waiting for its PUBACK must not wait on a client given up. */
  closed: Promise<never>;
}

export function startMqtt(ctx: AdapterContext, settings: MqttSettings, kit: ChannelKit, mqtt: typeof Mqtt, tuning: MqttTuning): ChannelConnection {
  let live: Live | undefined;
  let client: Mqtt.MqttClient | undefined;
  let stoppedBy: string | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
    waiters.clear();
  };
  const filters = [settings.topicIn, `${settings.topicIn}/#`];

  const connect = (link: { ready(): void; traffic(): void; signal: AbortSignal }) =>
    new Promise<void>((resolve, reject) => {
      const c = mqtt.connect(settings.url, {
        clientId: settings.clientId,
        clean: false,
        protocolVersion: 4,
        ...(settings.username !== undefined ? { username: settings.username } : {}),
        ...(settings.password !== undefined ? { password: settings.password } : {}),
        reconnectPeriod: 0,
        keepalive: tuning.keepaliveS,
        connectTimeout: tuning.readyWaitMs,
        reschedulePings: true,
      });
      client = c;
      let failure: Error | undefined;
      let markClosed!: (err: Error) => void;
      const closed = new Promise<never>((_, rejectClosed) => (markClosed = rejectClosed));
      closed.catch(() => undefined);
      // The PUBACK waits for the commit; a message that cannot become a chat message is acknowledged and dropped.
      c.handleMessage = (packet, done) => {
        link.traffic();
        const message = toInbound(packet.topic, Buffer.from(packet.payload), settings.topicIn);
        if ('refused' in message) {
          ctx.log.warn({ topic: packet.topic, reason: message.refused }, 'an MQTT message that is no chat message was dropped');
          return done();
        }
        ctx.emit(message).then(
          () => {
            if (c.connected) done();
          },
          (err: unknown) => {
            ctx.log.error({ err, chatId: message.chatId }, 'an MQTT message could not be journaled: not acknowledged, the broker delivers it again');
            failure = new Error('a message could not be journaled; reconnecting for its redelivery');
            c.end(true);
          },
        );
      };
      c.on('packetreceive', () => link.traffic());
      c.on('connect', () => {
        c.subscribe(filters, { qos: 1 }, (err, granted) => {
          if (err) return reject(channelError('transient', `the subscription failed: ${err.message}`));
          if (granted?.some((g) => g.qos === 128)) return reject(channelError('auth', `the broker refused the subscription to ${settings.topicIn}`));
          live = { client: c, closed };
          link.ready();
          ctx.report('connected');
          wake();
        });
      });
      c.on('error', (err: Error & { code?: unknown }) => {
        if (typeof err.code === 'number' && AUTH_CODES.has(err.code)) reject(channelError('auth', `the MQTT broker refused the credentials (${err.message})`));
        else failure ??= err;
      });
      c.on('close', () => {
        const err = failure ?? new Error('the MQTT broker closed the connection');
        markClosed(err);
        reject(err);
      });
      link.signal.addEventListener('abort', () => resolve(), { once: true });
    });

  const teardown = async () => {
    const c = client;
    client = undefined;
    if (live?.client === c) live = undefined;
    if (!c) return;
    // A clean end first: the PUBACKs of messages already committed go out before the DISCONNECT, so the broker does
    // not deliver them again; a message whose commit has not finished was never acknowledged and comes again on the
    // next connection. A connection that does not close in time is cut. Waiting for the socket to close (bounded) frees
    // the client id before a restart connects with it again: a broker that is still tearing the old connection down
    // while the new one subscribes may drop the session's subscriptions.
    const within = (ending: Promise<unknown>) =>
      Promise.race([ending.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), CLOSE_WAIT_MS).unref())]);
    if (!(await within(c.endAsync(false)))) await within(c.endAsync(true));
  };

  const loop = new kit.Reconnector({
    connect,
    teardown,
    isAuthError,
    // mqtt.js's messages name the broker and the reason, never the password.
    livenessMs: tuning.keepaliveS * 3 * 1000,
    signal: ctx.signal,
    onState(health) {
      if (health.state === 'stopped') {
        stoppedBy = health.lastError ?? 'stopped';
        ctx.report('error', stoppedBy);
        wake();
      } else if (health.state === 'waiting') ctx.report('connecting', health.lastError ?? undefined);
    },
  });
  const running = loop.run();

  /** The live connection; waits (bounded) while the loop rebuilds one. */
  const ready = async (deadline: number): Promise<Live> => {
    while (!live) {
      if (stoppedBy) throw channelError('auth', stoppedBy);
      if (ctx.signal.aborted) throw channelError('transient', 'the MQTT channel is stopping');
      const left = deadline - Date.now();
      if (left <= 0) throw channelError('transient', 'not connected to the MQTT broker');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return live;
  };

  return {
    // Resolves on the broker's PUBACK. A connection lost before it fails the call as transient and the channels module
    // sends again: a reply is published at least once, and its `id` (the journal row's) lets a consumer drop a repeat.
    async send(chunk: OutboundChunk) {
      const deadline = Date.now() + tuning.readyWaitMs;
      const { client: c, closed } = await ready(deadline);
      const { topic, payload } = toPublish(chunk, settings.topicOut);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(channelError('transient', 'the MQTT broker did not acknowledge the reply')), Math.max(1, deadline - Date.now()));
      });
      try {
        await Promise.race([c.publishAsync(topic, payload, { qos: 1 }), closed, timeout]);
      } catch (err) {
        throw err instanceof Error && err.name === 'ChannelError'
          ? err
          : channelError('transient', `the reply was not acknowledged: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
      return { messageId: chunk.nonce };
    },
    async stop() {
      wake();
      await running;
    },
  };
}
