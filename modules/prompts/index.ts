import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry } from '@talon/agents';
import { Versions } from './services/versions.ts';
import { AGENT_TOPIC, PromptCache } from './services/cache.ts';
import { Experiments } from './services/experiments.ts';
import { injectPrompts } from './services/inject.ts';
import { promptRoutes } from './routes/prompts.ts';
import { promptsConfigSchema, type PromptsConfig } from './config.ts';

export default defineModule<PromptsConfig>({
  configSchema: promptsConfigSchema,
  register(ctx) {
    const cache = new PromptCache(ctx.store, ctx.changes);
    // Another process activated a version or moved an experiment of this agent.
    ctx.changes.on(AGENT_TOPIC, (agentId) => cache.reload(agentId));
    const versions = new Versions(ctx.store, () => ctx.config.max_versions_per_agent, cache);
    const experiments = new Experiments(ctx.store, versions, cache, (err, rows) =>
      ctx.log.warn({ err, lost: rows.length }, 'prompt experiment counters could not be written'),
    );
    ctx.onStop(() => experiments.flush());
    const hooks = ctx.hooks.tryTap(agentHooks);
    const sweep = hooks && injectPrompts(hooks, { enabled: () => ctx.config.enabled, versions, experiments });
    return {
      async start() {
        await cache.load();
        if (sweep) ctx.setInterval(sweep, 60_000);
      },
      routes: (app) => promptRoutes(app, { enabled: () => ctx.config.enabled, agents: () => ctx.tryUse(agentRegistry), versions, experiments }),
    };
  },
});
