import { defineModule } from '@talon/module-sdk';
import { agentRegistry, agentRunner, sessionStore } from '../agents/api.ts';
import { catalogService } from '../catalog/api.ts';
import { usageService } from '../usage/api.ts';
import { agentsWsConfigSchema, type AgentsWsConfig } from './config.ts';
import type { ChatConnection } from './services/connection.ts';
import { wsRoutes } from './routes/ws.ts';

export default defineModule<AgentsWsConfig>({
  configSchema: agentsWsConfigSchema,
  register(ctx) {
    const closeAll = () => {
      for (const s of sockets) s.close(1001, 'service stopping');
      sockets.clear();
    };
    // Before the HTTP server drains: an open socket would otherwise hold the shutdown.
    ctx.hooks.kernel.kernel.shutdown.tapPromise('close-sockets', async () => closeAll());
    ctx.onStop(closeAll);
  },
  routes(app, ctx) {
    wsRoutes(
      app,
      {
        registry: () => ctx.use(agentRegistry),
        runner: () => ctx.use(agentRunner),
        sessions: () => ctx.use(sessionStore),
        usage: () => ctx.tryUse(usageService),
        catalog: () => ctx.tryUse(catalogService),
        get intervalMs() {
          return ctx.config.agents_updated_interval_ms;
        },
      },
      sockets,
    );
  },
});

/** Open sockets of this module copy, closed when it stops or reloads. */
const sockets = new Set<ChatConnection>();
