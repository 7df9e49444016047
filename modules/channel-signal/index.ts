import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { netFetch } from '@talon/net';
import { signalAdapter } from './services/adapter.ts';

export default defineModule({
  register(ctx) {
    // The kit and net's service are looked up when used: a reload of either does not leave the adapter on a stale copy.
    const adapter = signalAdapter(
      () => ctx.use(channelKit),
      (url, init, policy) => ctx.use(netFetch).webFetch(url, init, policy),
    );
    ctx.hooks.tap(channelHooks).adapters.tap('channel-signal', (list) => [...list, adapter]);
  },
});
