import { defineModule } from '@talon/module-sdk';
import { securityOverview } from './services/systems.ts';

export default defineModule({
  register: (ctx) => ({
    routes(app) {
      // Read per request: a module disabled, failed or reloaded shows at once.
      app.get('/api/security', { schema: { summary: 'Security systems and their state', tags: ['security'] } }, async () =>
        securityOverview(ctx.kernel.modules()),
      );
    },
  }),
});
