import { defineModule } from '@talon/module-sdk';
import { agentEvents, agentHooks, agentRegistry, agentRunner, agentTools, sessionStore, uploadFiles } from '@talon/agents';
import { agentsConfigSchema, type AgentsConfig } from './config.ts';
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
import type { AgentServices } from './services/context.ts';

/** How long stop() waits for stopped turns to end (a tool may finish its step first). */
const STOP_WAIT_MS = 2000;
/** How often expired generated files are removed (and once at start). */
const SWEEP_MS = 15 * 60_000;

export default defineModule<AgentsConfig>({
  configSchema: agentsConfigSchema,
  hooks: [agentHooks],
  events: [agentEvents],
  register(ctx) {
    const s = buildAgents(ctx);
    ctx.provide(agentRegistry, s.registry);
    ctx.provide(agentRunner, s.runner);
    ctx.provide(sessionStore, s.sessionStore);
    ctx.provide(agentTools, s.tools);
    ctx.provide(uploadFiles, s.uploads);
    return {
      async start() {
        await s.registry.load();
        // Turns of processes that died while none ran are taken over now, later ones when they die.
        await s.leases.sweep(await ctx.nodes.live());
        ctx.nodes.onDead((node) => lostNode(s, node));
        const sweep = () => s.uploads.sweep().catch((err: unknown) => ctx.log.warn({ err }, 'sweeping expired generated files failed'));
        void ctx.track(sweep());
        ctx.setInterval(sweep, SWEEP_MS);
      },
      async stop() {
        // Turns still running belong to this copy: end them so nothing writes after it is gone.
        for (const agent of s.registry.list()) s.runner.stop(agent.id);
        await s.runner.settled(STOP_WAIT_MS);
        await s.sessions.flush();
        await s.traces.flush();
        await s.leases.flush();
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

/** A process died: its turns are taken over (by one live process), and streams relayed to it end saying so. */
async function lostNode(s: AgentServices, node: string): Promise<void> {
  try {
    await s.leases.takeOver(node);
  } finally {
    s.relay.ownerLost(node);
  }
}
