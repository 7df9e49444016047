import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { zulipAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    // The kit and the store are read when a channel starts, so a reload of the channels module hands over its new copy.
    const adapter = zulipAdapter(
      () => ctx.use(channelKit),
      () => ctx.store,
    );
    ctx.hooks.tap(channelHooks).adapters.tap('channel-zulip', (list) => [...list, adapter]);
  },
});
