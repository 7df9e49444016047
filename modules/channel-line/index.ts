import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { lineAdapter } from './services/adapter.ts';
import type { LineEndpoint } from './services/webhook.ts';
import { webhookRoutes } from './routes/webhook.ts';

export default defineModule({
  register(ctx) {
    // The running adapter, for the webhook route: in this copy's closure, so a reload swaps both together.
    const endpoint: LineEndpoint = {};
    const adapter = lineAdapter(endpoint, () => ctx.use(channelKit));
    ctx.hooks.tap(channelHooks).adapters.tap('channel-line', (list) => [...list, adapter]);
    return { routes: (app) => webhookRoutes(app, endpoint) };
  },
});
