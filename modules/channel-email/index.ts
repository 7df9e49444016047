import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { emailAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    const adapter = emailAdapter(ctx.use(channelKit));
    // The tap goes with this copy of the module: a reload swaps the adapter in one step.
    ctx.hooks.tap(channelHooks).adapters.tap('channel-email', (list) => [...list, adapter]);
  },
});
