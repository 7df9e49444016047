import { defineModule } from '@talon/module-sdk';
import { agentRegistry, agentRunner } from '../agents/api.ts';
import { v1Routes } from './routes/v1.ts';

export default defineModule({
  routes(app, ctx) {
    v1Routes(app, { registry: () => ctx.use(agentRegistry), runner: () => ctx.use(agentRunner) });
  },
});
