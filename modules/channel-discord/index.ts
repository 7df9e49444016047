import { defineModule } from '@talon/module-sdk';
import { channelHooks } from '@talon/channels';
import { discordAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    // The channel is listed while this copy runs; a reload swaps the adapter in one step (the tap goes with the copy).
    const adapter = discordAdapter();
    ctx.hooks.tap(channelHooks).adapters.tap('discord', (list) => [...list, adapter]);
  },
});
