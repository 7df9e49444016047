import { defineModule } from '@talon/module-sdk';
import { skillStore } from '@talon/skills';
import { commandRoutes } from './routes/commands.ts';

export default defineModule({
  register(ctx) {
    return { routes: (app) => commandRoutes(app, () => ctx.tryUse(skillStore)) };
  },
});
