import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { whatsappAdapter } from './services/adapter.ts';
import type { WhatsAppEndpoint } from './services/webhook.ts';
import { webhookRoutes } from './routes/webhook.ts';

export default defineModule({
  register(ctx) {
    // The running webhook receiver, for the route: in this copy's closure, so a reload swaps both together.
    const endpoint: WhatsAppEndpoint = {};
    // The kit is read when the channel starts, so a reload of the channels module hands over its new copy.
    const adapter = whatsappAdapter(() => ctx.use(channelKit), endpoint);
    ctx.hooks.tap(channelHooks).adapters.tap('channel-whatsapp', (list) => [...list, adapter]);
    return { routes: (app) => webhookRoutes(app, endpoint) };
  },
});
