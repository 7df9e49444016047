import { defineModule } from '@talon/module-sdk';
import { healthRoutes } from './routes/health.ts';
import { infoRoutes } from './routes/info.ts';
import { frontRoutes } from './routes/front.ts';
import { openApiRoutes } from './routes/openapi.ts';

export default defineModule({
  routes(app, ctx) {
    healthRoutes(app, ctx);
    infoRoutes(app, ctx);
    frontRoutes(app, ctx);
    openApiRoutes(app, ctx);
  },
});
