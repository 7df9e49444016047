import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { slackAdapter } from './services/adapter.ts';
import type { SlackEndpoint } from './services/http.ts';
import { eventRoutes } from './routes/events.ts';

export default defineModule({
  register(ctx) {
    // One adapter per copy of the module: the tap goes with this copy when it stops or reloads. The running HTTP-mode
    // adapter is handed to the events route in this copy's closure, so a reload swaps both together.
    const endpoint: SlackEndpoint = {};
    const adapter = slackAdapter(ctx.use(channelKit), endpoint);
    ctx.hooks.tap(channelHooks).adapters.tap('channel-slack', (list) => [...list, adapter]);
    return { routes: (app) => eventRoutes(app, endpoint) };
  },
});
