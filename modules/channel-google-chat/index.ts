import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { googleChatAdapter } from './services/adapter.ts';
import type { ChatEndpoint } from './services/events.ts';
import { eventRoutes } from './routes/events.ts';

export default defineModule({
  register(ctx) {
    // The running adapter, for the events route: in this copy's closure, so a reload swaps both together.
    const endpoint: ChatEndpoint = {};
    const adapter = googleChatAdapter(endpoint, () => ctx.use(channelKit));
    ctx.hooks.tap(channelHooks).adapters.tap('channel-google-chat', (list) => [...list, adapter]);
    return { routes: (app) => eventRoutes(app, endpoint) };
  },
});
