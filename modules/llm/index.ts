import { defineModule } from '@talon/module-sdk';
import { catalogService } from '@talon/catalog';
import { llmDriverKit, llmHooks, llmService } from '@talon/llm';
import { llmConfigKeys, llmConfigSchema, type LlmConfig } from './config.ts';
import { resolveTarget } from './services/resolve.ts';
import { createLlmService } from './services/llm-service.ts';
import { driverKit } from './services/driver-kit.ts';

export default defineModule<LlmConfig>({
  configSchema: llmConfigSchema,
  configKeys: llmConfigKeys,
  hooks: [llmHooks],
  register(ctx) {
    const catalog = ctx.use(catalogService);
    const service = createLlmService({
      config: () => ctx.config,
      log: ctx.log,
      hooks: () => ctx.hooks.get(llmHooks),
      resolve: (ref) => resolveTarget(ref, { defaults: ctx.config.default_model, catalog, env: process.env, maxRetries: ctx.config.max_retries }),
    });
    ctx.provide(llmService, service);
    ctx.provide(llmDriverKit, driverKit);
  },
});
