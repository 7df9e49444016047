import { defineModule } from '@talon/module-sdk';
import { securityHooks } from '@talon/security';
import { securityOverview } from './services/systems.ts';

export default defineModule({
  hooks: [securityHooks],
  register: (ctx) => ({
    routes(app) {
      // Read per request: a module disabled, failed, reloaded or switched off by its policy shows at once.
      app.get('/api/security', { schema: { summary: 'Security systems and their state', tags: ['security'] } }, async () =>
        securityOverview(ctx.kernel.modules(), (states) => ctx.hooks.get(securityHooks).systemStates.call(states)),
      );
    },
  }),
});
