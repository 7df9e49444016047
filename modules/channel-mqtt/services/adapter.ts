/** The MQTT adapter as the channels module sees it: its fields, what MQTT chat bridges can do, and the reply limit. */
import type * as Mqtt from 'mqtt';
import type { ChannelAdapter, ChannelKit } from '@talon/channels';
import { mqttFields, mqttFieldsProblem, mqttSettings } from '../config.ts';
import { startMqtt, type MqttTuning } from './connection.ts';

/** A reply chunk's length: MQTT takes far more, chat clients on the other side show a screenful comfortably. */
export const MQTT_MAX_CHARS = 4096;

const DEFAULT_TUNING: MqttTuning = { keepaliveS: 30, readyWaitMs: 20_000 };

export function mqttAdapter(kit: ChannelKit, mqtt: () => typeof Mqtt, tuning: MqttTuning = DEFAULT_TUNING): ChannelAdapter {
  return {
    name: 'mqtt',
    description: 'MQTT (mqtt.js): JSON or plain-text messages on topic_in, replies on topic_out/<chat>, QoS 1 both ways',
    fields: mqttFields,
    secretFields: [],
    urlFields: [],
    fieldsProblem: mqttFieldsProblem,
    // Threads pass through as the `thread` field; MQTT has no files, typing or edits, and a broker drops no repeat.
    capabilities: { threads: true, media: false, typing: false, edits: false, qr: false, platformDedup: false },
    limits: { maxLength: MQTT_MAX_CHARS, unit: 'chars', format: 'plain' },
    async start(ctx) {
      return startMqtt(ctx, mqttSettings(ctx.channel, ctx.config, ctx.secrets), kit, mqtt(), tuning);
    },
  };
}
