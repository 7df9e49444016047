import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { rocketchatAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    // The kit is read when a channel starts, so a reload of the channels module hands over its new copy.
    const adapter = rocketchatAdapter(
      () => ctx.use(channelKit),
      () => ctx.store,
    );
    ctx.hooks.tap(channelHooks).adapters.tap('channel-rocketchat', (list) => [...list, adapter]);
  },
});
