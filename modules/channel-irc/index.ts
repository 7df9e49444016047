import { defineModule, lazyRequire } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import type * as IrcFramework from 'irc-framework';
import { ircModuleConfigSchema, type IrcModuleConfig } from './config.ts';
import { ircAdapter } from './services/adapter.ts';

/** Loaded when the channel starts: an unconfigured IRC channel costs no client library. */
const irc = lazyRequire<typeof IrcFramework>(import.meta.url, 'irc-framework');

export default defineModule<IrcModuleConfig>({
  configSchema: ircModuleConfigSchema,
  register(ctx) {
    const adapter = ircAdapter(ctx.use(channelKit), irc, () => ({ pingIntervalS: ctx.config.ping_interval_seconds, readyWaitMs: 20_000 }));
    ctx.hooks.tap(channelHooks).adapters.tap('channel-irc', (list) => [...list, adapter]);
  },
});
