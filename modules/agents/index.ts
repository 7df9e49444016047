import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner, sessionStore, type SessionStore } from './api.ts';
import { llmService } from '../llm/api.ts';
import { catalogService } from '../catalog/api.ts';
import { agentsConfigSchema } from './services/config.ts';
import type { AgentsConfig, LoopDeps } from './services/loop.ts';
import { AgentStore } from './services/registry.ts';
import { SessionService } from './services/sessions.ts';
import { Runner } from './services/runner.ts';
import { UploadStore } from './services/uploads.ts';
import { TraceStore } from './services/traces.ts';
import { compactSession } from './services/compact.ts';
import type { AgentServices } from './services/context.ts';
import { agentRoutes } from './routes/agents.ts';
import { bulkRoutes } from './routes/bulk.ts';
import { messageRoutes } from './routes/messages.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { globalSessionRoutes } from './routes/global-sessions.ts';
import { fileRoutes } from './routes/files.ts';
import { uploadRoutes } from './routes/uploads.ts';
import { memoryRoutes } from './routes/memory.ts';
import { observeRoutes } from './routes/observe.ts';
import { trajectoryRoutes } from './routes/trajectory.ts';

let services: AgentServices | undefined;

export default defineModule<AgentsConfig>({
  configSchema: agentsConfigSchema,
  hooks: [agentHooks],
  register(ctx) {
    const hooks = () => ctx.hooks.get(agentHooks);
    const catalog = () => ctx.tryUse(catalogService);
    const sessions = new SessionService(ctx.db);
    const uploads = new UploadStore(ctx.db, ctx.paths.uploads);
    const traces = new TraceStore(ctx.db);
    const registry = new AgentStore({
      db: ctx.db,
      workspaces: ctx.paths.workspaces,
      sessions,
      catalog,
      onSpawned: (agent) => hooks().agentSpawned.call(agent),
      onTerminated: (agent) => {
        // Its uploads and traces go with it; the workspace folder stays (it holds the user's files and checkpoints).
        uploads.deleteAgent(agent.id);
        traces.deleteAgent(agent.id);
        hooks().agentTerminated.call(agent);
      },
    });
    const loop: LoopDeps = { registry, sessions, uploads, traces, llm: ctx.use(llmService), catalog, hooks, config: () => ctx.config, log: ctx.log };
    const runner = new Runner({ ...loop, log: ctx.log });
    const store: SessionStore = {
      messages: (sessionId) => sessions.messages(sessionId),
      create: (agentId, label) => {
        registry.require(agentId);
        return sessions.create(agentId, label);
      },
      exists: (agentId, sessionId) => sessions.exists(agentId, sessionId),
      newSession: (agentId) => {
        registry.require(agentId);
        const id = sessions.create(agentId);
        registry.setSessionId(agentId, id);
        return id;
      },
      compact: (agentId) => compactSession(loop, agentId),
    };
    services = { ctx, registry, sessions, sessionStore: store, runner, uploads, traces, loop };
    ctx.provide(agentRegistry, registry);
    ctx.provide(agentRunner, runner);
    ctx.provide(sessionStore, store);
  },
  start() {
    services!.registry.load();
  },
  stop() {
    // Turns still running belong to this copy: end them so nothing writes after the module is gone.
    for (const agent of services?.registry.list() ?? []) services?.runner.stop(agent.id);
  },
  routes(app) {
    const s = services!;
    agentRoutes(app, s);
    bulkRoutes(app, s);
    messageRoutes(app, s);
    sessionRoutes(app, s);
    globalSessionRoutes(app, s);
    fileRoutes(app, s);
    uploadRoutes(app, s);
    memoryRoutes(app, s);
    observeRoutes(app, s);
    trajectoryRoutes(app, s);
  },
});
