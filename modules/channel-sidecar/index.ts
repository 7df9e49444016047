import { defineModule } from '@talon/module-sdk';
import { channelHooks } from '@talon/channels';
import { sandboxService } from '@talon/tools';
import { sidecarAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    // The sandbox is looked up per start: a reload of the tools module does not leave the adapter on a stale copy.
    const adapter = sidecarAdapter(() => ctx.use(sandboxService), ctx.dataDir);
    ctx.hooks.tap(channelHooks).adapters.tap('channel-sidecar', (list) => [...list, adapter]);
  },
});
