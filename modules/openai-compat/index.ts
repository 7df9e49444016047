import { defineModule } from '@talon/module-sdk';
import { agentRegistry, agentRunner } from '@talon/agents';
import { v1Routes } from './routes/v1.ts';

export default defineModule({
  register(ctx) {
    const deps = { registry: () => ctx.use(agentRegistry), runner: () => ctx.use(agentRunner) };
    return {
      routes: (app) => v1Routes(app, deps),
    };
  },
});
