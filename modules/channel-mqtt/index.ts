import { defineModule, lazyRequire } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import type * as Mqtt from 'mqtt';
import { mqttAdapter } from './services/adapter.ts';

/** Loaded when the channel starts: an unconfigured MQTT channel costs no client library. */
const mqtt = lazyRequire<typeof Mqtt>(import.meta.url, 'mqtt');

export default defineModule({
  register(ctx) {
    const adapter = mqttAdapter(ctx.use(channelKit), mqtt);
    ctx.hooks.tap(channelHooks).adapters.tap('channel-mqtt', (list) => [...list, adapter]);
  },
});
