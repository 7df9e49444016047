import { defineModule } from '@talon/module-sdk';
import { agentRegistry, agentRunner } from '@talon/agents';
import { authStatus } from '@talon/auth';
import { hooksConfigSchema, type HooksConfig } from './config.ts';
import { MinuteWindow } from './services/rate.ts';
import { checkToken } from './services/token.ts';
import { hookRoutes } from './routes/hooks.ts';

export default defineModule<HooksConfig>({
  configSchema: hooksConfigSchema,
  register(ctx) {
    checkToken(ctx.config, ctx.tryUse(authStatus));
    const window = new MinuteWindow();
    return {
      routes: (app) =>
        hookRoutes(app, { config: () => ctx.config, agents: () => ctx.use(agentRegistry), runner: () => ctx.use(agentRunner), events: ctx.events, window }),
    };
  },
});
