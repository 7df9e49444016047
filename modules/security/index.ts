import { defineModule } from '@talon/module-sdk';
import { securityHooks } from '@talon/security';
import { SecuritySystems } from './services/systems.ts';

export default defineModule({
  hooks: [securityHooks],
  register(ctx) {
    const systems = new SecuritySystems((module, problem) =>
      ctx.log.warn({ module }, `module '${module}' declares its security systems wrongly, skipped: ${problem}`),
    );
    return {
      routes(app) {
        app.get('/api/security', { schema: { summary: 'Security systems and their state', tags: ['security'] } }, async () =>
          systems.overview(ctx.kernel.modules(), (states) => ctx.hooks.get(securityHooks).systemStates.call(states)),
        );
      },
    };
  },
});
