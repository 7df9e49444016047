import { defineModule } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { GoalStore } from './services/store.ts';
import { goalRoutes } from './routes/goals.ts';

export default defineModule({
  register(ctx) {
    const store = new GoalStore(ctx.store);
    // With the agents module running, an agent_id must name an existing agent; without it, any UUID is kept.
    return { routes: (app) => goalRoutes(app, store, () => ctx.tryUse(agentRegistry)) };
  },
});
