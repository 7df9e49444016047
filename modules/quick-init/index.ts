import { defineModule } from '@talon/module-sdk';
import { catalogService } from '@talon/catalog';
import { initRoutes } from './routes/init.ts';

export default defineModule({
  register(ctx) {
    return { routes: (app) => initRoutes(app, ctx.kernel.config, () => ctx.tryUse(catalogService)) };
  },
});
