import { defineModule } from '@talon/module-sdk';
import { agentHooks } from '../agents/api.ts';
import { llmService } from '../llm/api.ts';
import { kvMemory, semanticMemory } from './api.ts';
import { memoryConfigSchema, type MemoryConfig } from './config.ts';
import { Memory } from './services/memory.ts';
import { Extractor } from './services/extractor.ts';
import { tapAgentHooks } from './services/agent-hooks.ts';
import { kvRoutes } from './routes/kv.ts';
import { entryRoutes } from './routes/entries.ts';
import { agentRoutes } from './routes/agents.ts';

const MAINTENANCE_MS = 3_600_000;
const EMBED_RETRY_MS = 15_000;

let memory: Memory | undefined;

export default defineModule<MemoryConfig>({
  configSchema: memoryConfigSchema,
  register(ctx) {
    const config = () => ctx.config;
    const llm = () => ctx.tryUse(llmService);
    const m = new Memory({ db: ctx.db, log: ctx.log, config, llm, schedule: (fn) => void ctx.setTimeout(fn, 0) });
    memory = m;
    ctx.provide(kvMemory, m.kv);
    ctx.provide(semanticMemory, m);
    const hooks = ctx.hooks.tryTap(agentHooks);
    if (hooks) tapAgentHooks(hooks, m, new Extractor(m, llm, config, ctx.log), config);
    ctx.onStop(() => m.stop());
  },
  start(ctx) {
    const m = memory!;
    // Decay is idempotent within a period, so an hourly run applies it once per period; expired entries go too.
    const maintain = () => {
      m.entries.decay();
      m.entries.cleanup({ stale: false });
    };
    maintain();
    ctx.setInterval(maintain, MAINTENANCE_MS);
    ctx.setInterval(() => m.queue.kick(), EMBED_RETRY_MS);
    m.queue.kick();
    ctx.log.info({ search: m.embeddingStatus() }, 'memory ready');
  },
  routes(app, ctx) {
    const get = () => memory!;
    const config = () => ctx.config;
    kvRoutes(app, () => get().kv);
    entryRoutes(app, get, config);
    agentRoutes(app, get, config);
  },
});
