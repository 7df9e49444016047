import { defineModule, STAGE } from '@talon/module-sdk';
import { llmHooks } from '@talon/llm';
import { catalogService } from '@talon/catalog';
import { agentRegistry } from '@talon/agents';
import { mediaHooks } from '@talon/media';
import { usageEvents, usageService } from '@talon/usage';
import { usageConfigSchema, type UsageConfig } from './config.ts';
import { UsageStore } from './services/store.ts';
import { Usage } from './services/usage.ts';
import { usageRoutes } from './routes/usage.ts';
import { budgetRoutes } from './routes/budget.ts';

export default defineModule<UsageConfig>({
  configSchema: usageConfigSchema,
  events: [usageEvents],
  register(ctx) {
    // Optional modules are looked up on each use: they may start, stop or reload after usage.
    const agents = () => ctx.tryUse(agentRegistry);
    const store = new UsageStore(ctx.store, ctx.changes, (err, rows) => ctx.log.error({ err, calls: rows.length }, 'usage rows could not be written'));
    // Rows still queued are written before this copy goes.
    ctx.onStop(() => store.flush());
    const usage = new Usage({
      store,
      config: () => ctx.config,
      catalog: () => ctx.tryUse(catalogService),
      agents,
    });
    ctx.provide(usageService, usage);
    const hooks = ctx.hooks.tap(llmHooks);
    const events = ctx.events.of(usageEvents);
    // Refuse before the provider is contacted; GUARD stage so other observers never see a refused call.
    hooks.beforeCall.tapPromise(
      'budget',
      async (call) => {
        const refusal = await usage.check(call);
        // Published for the audit trail: background turns and streams refuse without an HTTP 402 of their own.
        if (refusal) events.publish('budget.exceeded', { agentId: call.meta.agentId, provider: call.provider, model: call.model, ...refusal });
        return refusal;
      },
      { stage: STAGE.GUARD },
    );
    hooks.afterCall.tapPromise('meter', async (record) => usage.meter(record));
    // Media calls: the same budgets before, a priced row after (the media module is optional).
    const media = ctx.hooks.tryTap(mediaHooks);
    media?.beforeCall.tapPromise(
      'budget',
      async (call) => {
        const refusal = await usage.checkMedia(call);
        if (refusal)
          events.publish('budget.exceeded', { agentId: call.agentId, provider: call.provider, model: call.model ?? '', kind: call.kind, ...refusal });
        return refusal;
      },
      { stage: STAGE.GUARD },
    );
    media?.afterCall.tapPromise('meter', async (record) => usage.meterMedia(record));
    return {
      // The budgets are read on every model call: from memory, loaded here (register() does no I/O).
      start: () => store.load(),
      routes(app) {
        usageRoutes(app, usage);
        budgetRoutes(app, usage, agents);
      },
    };
  },
});
