import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner, agentTools, sessionStore } from '@talon/agents';
import { agentsConfigSchema, type AgentsConfig } from './services/config.ts';
import { buildAgents } from './services/build.ts';
import { agentRoutes } from './routes/agents.ts';
import { bulkRoutes } from './routes/bulk.ts';
import { messageRoutes } from './routes/messages.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { globalSessionRoutes } from './routes/global-sessions.ts';
import { fileRoutes } from './routes/files.ts';
import { uploadRoutes } from './routes/uploads.ts';
import { observeRoutes } from './routes/observe.ts';
import { trajectoryRoutes } from './routes/trajectory.ts';
import { guardAgentRoutes } from './services/guard.ts';

export default defineModule<AgentsConfig>({
  configSchema: agentsConfigSchema,
  hooks: [agentHooks],
  register(ctx) {
    const s = buildAgents(ctx);
    ctx.provide(agentRegistry, s.registry);
    ctx.provide(agentRunner, s.runner);
    ctx.provide(sessionStore, s.sessionStore);
    ctx.provide(agentTools, s.tools);
    return {
      start: () => s.registry.load(),
      async stop() {
        // Turns still running belong to this copy: end them so nothing writes after it is gone.
        for (const agent of s.registry.list()) s.runner.stop(agent.id);
        await s.sessions.flush();
        await s.traces.flush();
      },
      http: (app) => guardAgentRoutes(app, s.registry),
      routes(app) {
        for (const routes of [
          agentRoutes,
          bulkRoutes,
          messageRoutes,
          sessionRoutes,
          globalSessionRoutes,
          fileRoutes,
          uploadRoutes,
          observeRoutes,
          trajectoryRoutes,
        ]) {
          routes(app, s);
        }
      },
    };
  },
});
