import { defineModule } from '@talon/module-sdk';
import { agentRegistry, agentRunner, sessionStore } from '@talon/agents';
import { catalogService } from '@talon/catalog';
import { commandHooks, commandRegistry } from '@talon/commands';
import { skillStore } from '@talon/skills';
import { usageService } from '@talon/usage';
import { chatCommands } from './services/chat-commands.ts';
import { createCommandRegistry } from './services/registry.ts';
import { commandRoutes } from './routes/commands.ts';

export default defineModule({
  hooks: [commandHooks],
  register(ctx) {
    const spec = chatCommands({
      registry: () => ctx.use(agentRegistry),
      runner: () => ctx.use(agentRunner),
      sessions: () => ctx.use(sessionStore),
      usage: () => ctx.tryUse(usageService),
      catalog: () => ctx.tryUse(catalogService),
    });
    const registry = createCommandRegistry({
      commands: () => ctx.hooks.get(commandHooks).commands.call([...spec]),
      skills: () => ctx.tryUse(skillStore),
    });
    ctx.provide(commandRegistry, registry);
    return { routes: (app) => commandRoutes(app, registry) };
  },
});
