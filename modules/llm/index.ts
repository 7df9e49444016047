import { defineModule } from '@talon/module-sdk';
import { llmHooks, llmService, type ModelRef } from './api.ts';
import { catalogService } from '../catalog/api.ts';
import { llmConfigSchema, type LlmConfig } from './services/config.ts';
import { resolveTarget } from './services/resolve.ts';
import { createLlmService } from './services/llm-service.ts';

export default defineModule<LlmConfig>({
  configSchema: llmConfigSchema,
  hooks: [llmHooks],
  register(ctx) {
    const catalog = ctx.use(catalogService);
    const service = createLlmService({
      config: () => ctx.config,
      log: ctx.log,
      hooks: () => ctx.hooks.get(llmHooks),
      resolve: (ref) => resolveTarget(ref, { settings: ctx.settings, catalog, env: process.env, maxRetries: ctx.config.max_retries }),
      fallbacks: (): ModelRef[] =>
        ctx.settings.fallback_providers.map((f) => ({ provider: f.provider, model: f.model, baseUrl: f.base_url, apiKeyEnv: f.api_key_env })),
    });
    ctx.provide(llmService, service);
  },
});
