import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { semanticMemory } from '@talon/memory';
import { schedulerJobs } from '@talon/scheduler';
import { migrateRoutes } from './routes/migrate.ts';

export default defineModule({
  register(ctx) {
    return {
      routes: (app) =>
        migrateRoutes(app, {
          store: ctx.store,
          skillsDir: path.join(ctx.home, 'skills'),
          agents: () => ctx.tryUse(agentRegistry),
          memory: () => ctx.tryUse(semanticMemory),
          jobs: () => ctx.tryUse(schedulerJobs),
        }),
    };
  },
});
