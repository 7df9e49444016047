import { defineModule } from '@talon/module-sdk';
import { configRoutes } from './routes/config.ts';

export default defineModule({
  routes(app, ctx) {
    configRoutes(app, ctx);
  },
});
