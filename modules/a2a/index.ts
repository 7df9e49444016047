import { defineModule } from '@talon/module-sdk';
import type { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { agentHooks, agentRegistry, agentRunner } from '@talon/agents';
import { authStatus } from '@talon/auth';
import { secretVault } from '@talon/secrets';
import { netFetch } from '@talon/net';
import { a2aConfigSchema, type A2aConfig } from './config.ts';
import { StoreTaskStore } from './services/task-store.ts';
import { AgentTaskExecutor } from './services/executor.ts';
import { coreCard, instanceRpcUrl, type CardContext } from './services/card.ts';
import { RpcEndpoint } from './services/rpc.ts';
import { a2aServer } from './services/sdk.ts';
import { REMOTE_AGENTS, RemoteAgents } from './services/remote.ts';
import { a2aSendTool } from './services/tool.ts';
import { serverRoutes } from './routes/server.ts';
import { clientRoutes } from './routes/client.ts';

const PRUNE_MS = 3_600_000;
/** Most bytes of one answer of an external agent (a reply, or a whole event stream); messages are far smaller. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

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
    const store = new StoreTaskStore(ctx.store, ctx.nodes.id);
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
    // Discovery and every SDK call go through net: SSRF rules, the connection pinned to the checked address, no
    // redirects, loopback and private hosts only as origins named in [a2a] allowed_hosts. Looked up per request, so
    // a reload of net (or of the config) is picked up.
    const fetchImpl: typeof fetch = (input, init) =>
      ctx.use(netFetch).webFetch(input, init, {
        timeoutMs: config().request_timeout_secs * 1000,
        maxBytes: MAX_ANSWER_BYTES,
        allowOrigins: config().allowed_hosts,
      });
    const remote = new RemoteAgents({
      store: ctx.store,
      changes: ctx.changes,
      fetch: fetchImpl,
      vault: () => ctx.use(secretVault),
      maxChars: () => config().max_message_chars,
    });
    ctx.hooks.tap(agentHooks).tools.tap('a2a', (list) => [...list, a2aSendTool(remote)]);
    // Another process discovered an agent (or changed its token): the list and that agent's client follow.
    ctx.changes.on(REMOTE_AGENTS, (id) => remote.load(id));

    const defaultAgent = () => {
      const wanted = config().default_agent;
      const agents = registry().list();
      if (wanted) return registry().get(wanted.toLowerCase()) ?? registry().findByName(wanted);
      return agents.length === 1 ? agents[0] : undefined;
    };
    const maxChars = () => config().max_message_chars;
    return {
      async start() {
        await remote.load();
        // Tasks of processes that are gone were cut off: those of a process that died while this one runs when it is
        // found dead, those of processes gone before this one started now. The live processes' tasks are theirs.
        ctx.nodes.onDead(async (node) => {
          const cut = await store.takeOver(node);
          if (cut) ctx.log.warn({ tasks: cut, node }, 'A2A tasks of a process that died are marked failed');
        });
        const cut = await store.sweep(await ctx.nodes.live());
        if (cut) ctx.log.warn({ tasks: cut }, 'A2A tasks cut off by the last stop are marked failed');
        const prune = async () => {
          await store.prune(config().task_retention_hours, config().max_tasks);
          await remote.prune(config().task_retention_hours);
        };
        await prune();
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
