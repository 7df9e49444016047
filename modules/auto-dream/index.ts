import { defineModule } from '@talon/module-sdk';
import { agentEvents, agentRegistry } from '@talon/agents';
import { dreamEvents } from '@talon/auto-dream';
import { semanticMemory } from '@talon/memory';
import { schedulerHooks, schedulerJobs } from '@talon/scheduler';
import { Dreams } from './services/dreams.ts';
import { dreamRoutes } from './routes/auto-dream.ts';
import { autoDreamConfigSchema, type AutoDreamConfig } from './config.ts';

export default defineModule<AutoDreamConfig>({
  configSchema: autoDreamConfigSchema,
  events: [dreamEvents],
  register(ctx) {
    const agents = () => ctx.tryUse(agentRegistry);
    const dreams = new Dreams({
      store: ctx.store,
      nodes: ctx.nodes,
      agents,
      memory: () => ctx.tryUse(semanticMemory),
      jobs: () => ctx.tryUse(schedulerJobs),
      config: () => ctx.config,
      warn: (err, agentId) => ctx.log.warn({ err, agentId }, "could not set up the agent's auto-dream job"),
      publish: (agentId, status, detail) => ctx.events.of(dreamEvents).publish('memory.consolidated', { agentId, status, result: detail.result }),
    });
    // The scheduler runs the jobs; this tap is what a run does (it goes with this copy of the module).
    ctx.hooks.tryTap(schedulerHooks)?.handler.tapPromise('auto-dream', (job) => dreams.scheduled(job));
    // Local only (the default): the process that spawned the agent makes its job.
    ctx.events.of(agentEvents).subscribe('agent.spawned', (event) => dreams.sync(event.data.agentId));
    ctx.hooks.kernel.config.changed.tapPromise('auto-dream', async (change) => {
      if (change.path === '' || change.path.startsWith('auto_dream')) await dreams.syncAll();
    });
    return {
      async start() {
        // A process that died while creating an agent's job leaves it pending: a live one creates it (when it is found
        // dead, and at start for nodes that died while none ran).
        ctx.nodes.onDead((node) => dreams.takeOver(node));
        await dreams.sweep();
        await dreams.syncAll();
      },
      routes: (app) => dreamRoutes(app, dreams, agents),
    };
  },
});
