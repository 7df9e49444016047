import { defineModule, STAGE } from '@talon/module-sdk';
import { llmHooks } from '../llm/api.ts';
import { catalogService } from '../catalog/api.ts';
import { agentRegistry } from '../agents/api.ts';
import { usageService } from './api.ts';
import { usageConfigSchema, type UsageConfig } from './config.ts';
import { UsageStore } from './services/store.ts';
import { Usage } from './services/usage.ts';
import { usageRoutes } from './routes/usage.ts';
import { budgetRoutes } from './routes/budget.ts';

let usage: Usage | undefined;
const current = (): Usage => {
  if (!usage) throw new Error('usage module is not registered');
  return usage;
};

export default defineModule<UsageConfig>({
  configSchema: usageConfigSchema,
  register(ctx) {
    usage = new Usage({
      store: new UsageStore(ctx.db),
      config: () => ctx.config,
      catalog: () => ctx.tryUse(catalogService),
      agents: () => ctx.tryUse(agentRegistry),
    });
    const service = usage;
    ctx.provide(usageService, service);
    const hooks = ctx.hooks.tap(llmHooks);
    // Refuse before the provider is contacted; GUARD stage so other observers never see a refused call.
    hooks.beforeCall.tapPromise('budget', async (call) => service.check(call), { stage: STAGE.GUARD });
    hooks.afterCall.tapPromise('meter', async (record) => service.meter(record));
  },
  routes(app, ctx) {
    usageRoutes(app, current);
    budgetRoutes(app, current, () => ctx.tryUse(agentRegistry));
  },
});
