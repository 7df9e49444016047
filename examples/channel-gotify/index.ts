import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { gotifyAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    // The kit (reconnect loop, retry-after parsing) comes from the running channels module: a module may not import
    // another module's files, only its contract.
    const adapter = gotifyAdapter(() => ctx.use(channelKit));
    ctx.hooks.tap(channelHooks).adapters.tap('channel-gotify', (list) => [...list, adapter]);
  },
});
