import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { slackAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    // One adapter per copy of the module: the tap goes with this copy when it stops or reloads.
    const adapter = slackAdapter(ctx.use(channelKit));
    ctx.hooks.tap(channelHooks).adapters.tap('channel-slack', (list) => [...list, adapter]);
  },
});
