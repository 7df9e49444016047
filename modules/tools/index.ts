import { defineModule } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner } from '../agents/api.ts';
import { kvMemory } from '../memory/api.ts';
import { toolsConfigSchema, type ToolsConfig } from './config.ts';
import { builtinTools } from './services/builtin.ts';
import type { ToolDeps } from './services/deps.ts';
import { toolRoutes } from './routes/tools.ts';

export default defineModule<ToolsConfig>({
  configSchema: toolsConfigSchema,
  register(ctx) {
    const deps: ToolDeps = {
      config: () => ctx.config,
      registry: () => ctx.use(agentRegistry),
      runner: () => ctx.use(agentRunner),
      memory: () => ctx.tryUse(kvMemory),
    };
    const mine = builtinTools(deps);
    ctx.hooks.tap(agentHooks).tools.tap('builtin', (list) => [...list, ...mine]);
  },
  routes(app, ctx) {
    toolRoutes(app, ctx);
  },
});
