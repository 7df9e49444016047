import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner, agentTools, type ToolDefinition } from '@talon/agents';
import { authStatus } from '@talon/auth';
import { catalogHooks } from '@talon/catalog';
import { secretVault } from '@talon/secrets';
import { hubEvents, registryService } from '@talon/hub';
import { invokeGate } from '@talon/tools';
import { mcpConfigSchema, mcpServerSchema, mcpServersSchema, type McpConfig } from './config.ts';
import { SERVERS, ServerStore } from './services/store.ts';
import { Catalog } from './services/catalog.ts';
import { RegistryLayer } from './services/catalog-registry.ts';
import { McpManager } from './services/manager.ts';
import { McpServers } from './services/servers.ts';
import { agentToolDefinitions } from './services/agent-tools.ts';
import { checkMcpNames } from './services/manifest-check.ts';
import { endpointRoutes } from './routes/endpoint.ts';
import { serverRoutes } from './routes/servers.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { mcpIntegrations } from '@talon/mcp';
import { integrations } from './services/integrations.ts';

export default defineModule<McpConfig>({
  configSchema: mcpConfigSchema,
  configKeys: { mcp_servers: mcpServersSchema, mcp_server: mcpServerSchema },
  register(ctx) {
    const config = () => ctx.config;
    const connectTimeoutMs = () => config().connect_timeout_secs * 1000;
    // Rebuilt when a tool list changes, so the tool runner's schema cache (keyed by object) keeps working.
    let toolDefs: ToolDefinition[] = [];
    const limits = {
      timeoutMs: (conn: { spec: { timeoutSecs?: number } }) => (conn.spec.timeoutSecs ?? config().timeout_secs) * 1000,
      maxChars: () => config().max_result_chars,
    };
    const manager: McpManager = new McpManager({
      log: ctx.log,
      clientVersion: ctx.version,
      connectTimeoutMs,
      reconnectBaseMs: () => config().reconnect_base_ms,
      reconnectMaxMs: () => config().reconnect_max_secs * 1000,
      onTools: () => void (toolDefs = agentToolDefinitions(manager.list(), limits)),
      setTimeout: (fn, ms) => ctx.setTimeout(fn, ms),
    });
    const store = new ServerStore(ctx.store, ctx.changes, () => ctx.use(secretVault));
    const catalog = new Catalog(path.join(ctx.dir, 'bundled'), (where, err) => ctx.log.warn({ where, err: err.message }, 'MCP catalogue template skipped'));
    const fromRegistry = new RegistryLayer(catalog, () => ctx.tryUse(registryService), ctx.log);
    const servers = new McpServers({ store, manager, catalog, config, log: ctx.log, refreshRegistry: () => fromRegistry.refresh() });
    ctx.provide(mcpIntegrations, integrations(catalog, manager, servers));

    ctx.hooks.tap(agentHooks).tools.tap('mcp', (list) => [...list, ...toolDefs]);
    ctx.hooks.tap(agentHooks).checkManifest.tap('mcp-names', (check) => checkMcpNames(check, manager.list()));
    // config.toml edited or reloaded: servers of [[mcp_servers]] follow (unchanged ones keep their connection).
    ctx.hooks.kernel.config.changed.tapPromise('mcp-servers', async () => void manager.reconcile(servers.specs()));
    // The catalogue follows the hub registry: POST /api/catalog/update syncs it, and every sync is read.
    ctx.hooks.tap(catalogHooks).update.tapPromise('mcp', async (report) => {
      const outcome = await fromRegistry.update();
      if (outcome) report.parts.mcp = outcome;
    });
    ctx.events.of(hubEvents).subscribe('hub.synced', async (event) => {
      if (event.data.registry === 'hub') await fromRegistry.refresh();
    });

    const auth = () => ctx.tryUse(authStatus);
    const endpoint = {
      version: ctx.version,
      registry: () => ctx.use(agentRegistry),
      runner: () => ctx.use(agentRunner),
      tools: () => ctx.use(agentTools),
      gate: () => ctx.tryUse(invokeGate),
      keyRequired: () => auth()?.keyRequired() ?? false,
      publicTools: () => config().mcp_server.public_tools,
      agentHeader: () => config().agent_header,
    };
    return {
      async start() {
        // Each process connects to every server: one another process stores, changes or removes is followed here
        // (heard from before the first read, so no change falls between).
        ctx.changes.on(SERVERS, () => servers.followStore());
        await store.load();
        // Servers connect in the background; remote catalogue URLs may be slow, start-up waits for neither.
        manager.reconcile(servers.specs());
        void servers.reload().catch((err: Error) => ctx.log.error({ err: err.message }, 'MCP start-up reload failed'));
      },
      stop: () => manager.stop(),
      routes(app) {
        endpointRoutes(app, endpoint);
        serverRoutes(app, servers, manager, connectTimeoutMs);
        catalogRoutes(app, catalog, manager);
      },
    };
  },
});
