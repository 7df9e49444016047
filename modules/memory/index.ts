import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry } from '@talon/agents';
import { llmService } from '@talon/llm';
import { kvMemory, memoryEvents, semanticMemory } from '@talon/memory';
import { memoryConfigSchema, type MemoryConfig } from './config.ts';
import { Memory } from './services/memory.ts';
import { detectEmbeddingProvider } from './services/embedder.ts';
import { Extractor } from './services/extractor.ts';
import { tapAgentHooks } from './services/agent-hooks.ts';
import { kvRoutes } from './routes/kv.ts';
import { entryRoutes } from './routes/entries.ts';
import { agentRoutes } from './routes/agents.ts';
import { agentKvRoutes } from './routes/agent-kv.ts';

const MAINTENANCE_MS = 3_600_000;
const EMBED_RETRY_MS = 15_000;

export default defineModule<MemoryConfig>({
  configSchema: memoryConfigSchema,
  events: [memoryEvents],
  register(ctx) {
    const config = () => ctx.config;
    const events = ctx.events.of(memoryEvents);
    // Optional modules are looked up on each use: they may start, stop or reload after memory.
    const llm = () => ctx.tryUse(llmService);
    const agents = () => ctx.tryUse(agentRegistry);
    const memory = new Memory({
      store: ctx.store,
      log: ctx.log,
      config,
      llm,
      schedule: (fn) => void ctx.setTimeout(fn, 0),
      changed: (change) => void events.publish('memory.updated', change),
      feed: ctx.changes,
    });
    ctx.provide(kvMemory, memory.kv);
    ctx.provide(semanticMemory, memory);
    const hooks = ctx.hooks.tryTap(agentHooks);
    if (hooks) tapAgentHooks(hooks, memory, new Extractor(memory, llm, config, ctx.log), config);
    ctx.onStop(() => memory.stop());
    return {
      async start() {
        await memory.init();
        // Decay is idempotent within a period, so an hourly run applies it once per period (in whichever process runs
        // it first: the others then find nothing to decay); expired entries go too.
        const maintain = async () => {
          await memory.entries.decay();
          await memory.entries.cleanup({ stale: false });
        };
        await maintain();
        ctx.setInterval(maintain, MAINTENANCE_MS);
        ctx.setInterval(() => memory.queue.kick(), EMBED_RETRY_MS);
        memory.queue.kick();
        ctx.log.info({ search: memory.embeddingStatus() }, 'memory ready');
        // Embeddings send entry text to a provider, so they are opt-in; say when one is at hand.
        const available = ctx.config.embedding_provider.trim() === '' ? detectEmbeddingProvider() : undefined;
        if (available)
          ctx.log.info({ from: available.from }, 'an embedding provider is available: [memory] embedding_provider = "auto" would use it for vector search');
      },
      routes(app) {
        kvRoutes(app, memory.kv);
        entryRoutes(app, memory, config);
        agentRoutes(app, memory, config);
        agentKvRoutes(app, memory.kv, agents);
      },
    };
  },
});
