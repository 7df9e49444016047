import { defineModule } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { teamsAdapter } from './services/adapter.ts';
import type { TeamsEndpoint } from './services/receiver.ts';
import { messageRoutes } from './routes/messages.ts';

export default defineModule({
  register(ctx) {
    // The running receiver, for the route: in this copy's closure, so a reload swaps both together. The kit is read
    // when a channel starts, so a reload of the channels module hands over its new copy.
    const endpoint: TeamsEndpoint = {};
    const adapter = teamsAdapter(
      () => ctx.use(channelKit),
      () => ctx.store,
      endpoint,
    );
    ctx.hooks.tap(channelHooks).adapters.tap('channel-teams', (list) => [...list, adapter]);
    return { routes: (app) => messageRoutes(app, endpoint) };
  },
});
