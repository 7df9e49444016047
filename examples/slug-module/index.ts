import { defineModule } from '@talon/module-sdk';
import { slugConfigSchema, type SlugConfig } from './config.ts';
import { Slugs } from './services/slugs.ts';
import { slugRoutes } from './routes/slugs.ts';

export default defineModule<SlugConfig>({
  configSchema: slugConfigSchema,
  register(ctx) {
    // The state lives in this closure and reaches the routes typed; a reload builds a fresh one.
    const slugs = new Slugs(ctx.db, () => ctx.config);
    return {
      routes: (app) => slugRoutes(app, slugs),
    };
  },
});
