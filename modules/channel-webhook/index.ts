import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { webhookAdapter, type WebhookEndpoint } from './services/adapter.ts';
import { inboundRoutes } from './routes/inbound.ts';

export default defineModule({
  register(ctx) {
    // The running adapter, for the inbound route: in this copy's closure, so a reload swaps both together.
    const endpoint: WebhookEndpoint = {};
    const adapter = webhookAdapter(endpoint, () => ctx.use(channelKit));
    ctx.hooks.tap(channelHooks).adapters.tap('channel-webhook', (list) => [...list, adapter]);
    return { routes: (app) => inboundRoutes(app, endpoint) };
  },
});
