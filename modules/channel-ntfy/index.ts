import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { netFetch } from '@talon/net';
import { ntfyAdapter } from './services/adapter.ts';
import { storeCursor } from './services/cursor.ts';

export default defineModule({
  register(ctx) {
    // net's service is looked up per request: a reload of net does not leave the stream on a stale copy.
    const adapter = ntfyAdapter(
      ctx.use(channelKit),
      (url, init, policy) => ctx.use(netFetch).webFetch(url, init, policy),
      storeCursor(() => ctx.store),
    );
    ctx.hooks.tap(channelHooks).adapters.tap('channel-ntfy', (list) => [...list, adapter]);
  },
});
