import { defineModule } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { bindingRouter } from '@talon/bindings';
import { BindingStore } from './services/store.ts';
import { bindingRoutes } from './routes/bindings.ts';

export default defineModule({
  register(ctx) {
    const store = new BindingStore(ctx.store, ctx.changes);
    ctx.provide(bindingRouter, store);
    return { start: () => store.load(), routes: (app) => bindingRoutes(app, store, () => ctx.tryUse(agentRegistry)) };
  },
});
