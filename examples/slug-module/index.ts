import { defineModule } from '@talon/module-sdk';
import { agentHooks } from '@talon/agents';
import { slugConfigSchema, type SlugConfig } from './config.ts';
import { Slugs } from './services/slugs.ts';
import { slugTool } from './services/tool.ts';
import { slugRoutes } from './routes/slugs.ts';

export default defineModule<SlugConfig>({
  configSchema: slugConfigSchema,
  register(ctx) {
    // The state lives in this closure and reaches the routes typed; a reload builds a fresh one.
    const slugs = new Slugs(ctx.store, () => ctx.config);
    // Agents may use the slugs too, while the agents module runs (optional_depends: the module works without it).
    ctx.hooks.tryTap(agentHooks)?.tools.tap('slug', (tools) => [...tools, slugTool(slugs)]);
    return {
      routes: (app) => slugRoutes(app, slugs),
    };
  },
});
