import { defineModule } from '@talon/module-sdk';
import { agentEvents, agentRegistry, agentRunner } from '@talon/agents';
import { commandRegistry } from '@talon/commands';
import { agentsWsConfigSchema, type AgentsWsConfig } from './config.ts';
import type { ChatConnection } from './services/connection.ts';
import { wsRoutes } from './routes/ws.ts';

export default defineModule<AgentsWsConfig>({
  configSchema: agentsWsConfigSchema,
  register(ctx) {
    // Open sockets of this copy, closed when it stops or reloads.
    const sockets = new Set<ChatConnection>();
    const closeAll = () => {
      for (const s of sockets) s.close(1001, 'service stopping');
      sockets.clear();
    };
    // Before the HTTP server drains: an open socket would otherwise hold the shutdown.
    ctx.hooks.kernel.kernel.shutdown.tapPromise('close-sockets', async () => closeAll());
    ctx.onStop(closeAll);
    // An observer: other processes' spawns and kills count too (their records reach the registry before the event).
    ctx.events.of(agentEvents).subscribe(
      ['agent.spawned', 'agent.terminated'],
      () => {
        for (const s of sockets) s.agentsUpdated();
      },
      { remote: true },
    );
    const deps = {
      registry: () => ctx.use(agentRegistry),
      runner: () => ctx.use(agentRunner),
      commands: () => ctx.tryUse(commandRegistry),
      get intervalMs() {
        return ctx.config.agents_updated_interval_ms;
      },
    };
    return {
      routes: (app) => wsRoutes(app, deps, sockets),
    };
  },
});
