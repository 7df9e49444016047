import { defineModule } from '@talon/module-sdk';
import type { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { agentHooks, agentRegistry, agentRunner } from '@talon/agents';
import { authStatus } from '@talon/auth';
import { secretVault } from '@talon/catalog';
import { a2aConfigSchema, type A2aConfig } from './config.ts';
import { SqliteTaskStore } from './services/task-store.ts';
import { AgentTaskExecutor } from './services/executor.ts';
import { coreCard, instanceRpcUrl, type CardContext } from './services/card.ts';
import { RpcEndpoint } from './services/rpc.ts';
import { a2aServer } from './services/sdk.ts';
import { guardedFetch } from './services/guarded-fetch.ts';
import { RemoteAgents } from './services/remote.ts';
import { a2aSendTool } from './services/tool.ts';
import { serverRoutes } from './routes/server.ts';
import { clientRoutes } from './routes/client.ts';

const PRUNE_MS = 3_600_000;

export default defineModule<A2aConfig>({
  configSchema: a2aConfigSchema,
  register(ctx) {
    const config = () => ctx.config;
    const registry = () => ctx.use(agentRegistry);
    const cardContext = (): CardContext => ({
      name: config().name,
      description: config().description,
      version: ctx.kernel.version,
      baseUrl: (config().public_url || `http://${ctx.kernel.listenAddress() ?? ctx.kernel.apiListen()}`).replace(/\/+$/, ''),
      keyRequired: ctx.tryUse(authStatus)?.keyRequired() ?? false,
    });
    const instanceCard = () => {
      const c = cardContext();
      return coreCard(c, instanceRpcUrl(c), c.name, c.description, registry().list());
    };
    const store = new SqliteTaskStore(ctx.db);
    const executor = new AgentTaskExecutor(() => ctx.use(agentRunner), ctx.log);
    // Made with the first A2A request. The card is built per request (agents come and go, the listen address is
    // known only once listening).
    let sdkHandler: DefaultRequestHandler | undefined;
    const handler = () => {
      if (sdkHandler) return sdkHandler;
      const { DefaultRequestHandler, DefaultExecutionEventBusManager } = a2aServer();
      return (sdkHandler = new (class extends DefaultRequestHandler {
        override async getAgentCard() {
          return instanceCard();
        }
      })(instanceCard(), store, executor, new DefaultExecutionEventBusManager()));
    };
    const rpc = new RpcEndpoint(handler);
    const fetchImpl = guardedFetch(
      () => config().allowed_hosts,
      () => config().request_timeout_secs * 1000,
    );
    const remote = new RemoteAgents({
      db: ctx.db,
      fetch: fetchImpl,
      vault: () => ctx.use(secretVault),
      allowedHosts: () => config().allowed_hosts,
      maxChars: () => config().max_message_chars,
    });
    ctx.hooks.tap(agentHooks).tools.tap('a2a', (list) => [...list, a2aSendTool(remote)]);

    const defaultAgent = () => {
      const wanted = config().default_agent;
      const agents = registry().list();
      if (wanted) return registry().get(wanted.toLowerCase()) ?? registry().findByName(wanted);
      return agents.length === 1 ? agents[0] : undefined;
    };
    const maxChars = () => config().max_message_chars;
    return {
      start() {
        const cut = store.failInterrupted();
        if (cut) ctx.log.warn({ tasks: cut }, 'A2A tasks cut off by the last stop are marked failed');
        const prune = () => {
          store.prune(config().task_retention_hours, config().max_tasks);
          remote.prune(config().task_retention_hours);
        };
        prune();
        ctx.setInterval(prune, PRUNE_MS);
      },
      stop() {
        executor.abortAll();
      },
      routes(app) {
        serverRoutes(app, { registry, handler, rpc, store, cardContext, instanceCard, defaultAgent, maxChars, publicCard: () => config().public_card });
        clientRoutes(app, remote, maxChars);
      },
    };
  },
});
