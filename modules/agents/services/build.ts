/** The module's state, built once per copy in register(): stores, the tool runner, the turn runner, the views. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ModuleContext } from '@talon/module-sdk';
import { agentEvents, agentHooks, type SessionStore, type ToolDefinition } from '@talon/agents';
import { catalogService } from '@talon/catalog';
import { llmService } from '@talon/llm';
import type { AgentsConfig } from '../config.ts';
import type { AgentServices } from './context.ts';
import type { LoopDeps } from './loop.ts';
import { AgentStore } from './registry.ts';
import { SessionService } from './sessions.ts';
import { Runner } from './runner.ts';
import { SessionLeases } from './leases.ts';
import { Relay } from './relay.ts';
import { UploadStore } from './uploads.ts';
import { TraceStore } from './traces.ts';
import { ToolRunner } from './tool-runner.ts';
import { AgentViews } from './views.ts';
import { compactSession } from './compact.ts';
import { manifestProblems } from './manifest-check.ts';

export function buildAgents(ctx: ModuleContext<AgentsConfig>): AgentServices & { tools: ToolRunner } {
  const hooks = () => ctx.hooks.get(agentHooks);
  const events = ctx.events.of(agentEvents);
  const catalog = () => ctx.tryUse(catalogService);
  const llm = ctx.use(llmService);
  const sessions = new SessionService(ctx.store, ctx.changes, ctx.log);
  const uploads = new UploadStore(
    ctx.store,
    () => path.join(ctx.dataDir, 'uploads'),
    () => ({
      image: ctx.config.generated_image_max_bytes,
      audio: ctx.config.generated_audio_max_bytes,
      video: ctx.config.generated_video_max_bytes,
      retentionDays: ctx.config.generated_retention_days,
    }),
  );
  const traces = new TraceStore(ctx.store, ctx.log);
  // Set below: the registry tells the runner about agents another process killed.
  let runner: Runner | undefined;
  const registry = new AgentStore({
    store: ctx.store,
    changes: ctx.changes,
    // Workspaces are for people to browse, so they live in the home, not in the module's private data folder.
    workspaces: path.join(ctx.home, 'workspaces'),
    sessions,
    catalog,
    onSpawned: (agent) => {
      hooks().agentSpawned.call(agent);
      events.publish('agent.spawned', { agentId: agent.id, name: agent.name, parentId: agent.parentId });
    },
    expandManifest: (manifest) => hooks().manifest.call(manifest),
    checkManifest: (manifest) =>
      manifestProblems(manifest, { catalog, tools: (): ToolDefinition[] => tools.list(), check: (check) => hooks().checkManifest.call(check) }),
    authorizeSpawn: (request) => hooks().authorizeSpawn.call(request),
    onTerminated: async (agent) => {
      // Its uploads and traces go with it; the workspace folder stays (it holds the user's files and checkpoints).
      await uploads.deleteAgent(agent.id);
      await traces.deleteAgent(agent.id);
      hooks().agentTerminated.call(agent);
      events.publish('agent.terminated', { agentId: agent.id, name: agent.name });
    },
    // The killing process ran the hooks and published the event; here only its turns end (and those of a stopped one).
    onChangedElsewhere: (before, after) => {
      if (!after || (after.state === 'Stopped' && before.state !== 'Stopped')) runner?.stop(before.id);
    },
  });
  const invocationWorkspace = () => {
    const dir = path.join(ctx.home, 'workspaces', 'direct-invocation');
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const tools = new ToolRunner({ registry, hooks, events, invocationWorkspace, log: ctx.log });
  const loop: LoopDeps = { registry, sessions, uploads, traces, tools, llm, catalog, hooks, events, config: () => ctx.config, log: ctx.log };
  const leases = new SessionLeases({ store: ctx.store, changes: ctx.changes, node: ctx.nodes.id, traces, log: ctx.log });
  runner = new Runner(loop, { leases, node: ctx.nodes.id, signal: ctx.signal });
  const sessionStore: SessionStore = {
    messages: (sessionId) => sessions.messages(sessionId),
    create: async (agentId, label, t) => {
      if (!t) registry.require(agentId);
      return sessions.create(agentId, label, t);
    },
    appendUser: (t, sessionId, content, blocks) => sessions.appendInTx(t, sessionId, content, blocks),
    settled: () => sessions.flush(),
    exists: (agentId, sessionId) => sessions.exists(agentId, sessionId),
    newSession: async (agentId) => {
      registry.require(agentId);
      const id = await sessions.create(agentId);
      await registry.setSessionId(agentId, id);
      return id;
    },
    compact: (agentId) => compactSession(loop, agentId),
  };
  const views = new AgentViews(() => llm.defaultModel());
  const relay = new Relay({ nodes: ctx.nodes, log: ctx.log });
  return { ctx, registry, sessions, sessionStore, runner, uploads, traces, views, tools, leases, relay };
}
