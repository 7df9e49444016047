import { defineModule } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { registryService } from '@talon/hub';
import { taskQueue } from '@talon/tasks';
import { workflowRunner } from '@talon/workflows';
import { workflowsConfigSchema, type WorkflowsConfig } from './config.ts';
import { WorkflowStore } from './services/store.ts';
import { RunStore } from './services/runs.ts';
import { Runner } from './services/runner.ts';
import { workflowRoutes } from './routes/workflows.ts';
import { runRoutes } from './routes/runs.ts';
import { TemplateCatalog } from './services/templates.ts';
import { templateRoutes } from './routes/templates.ts';

export default defineModule<WorkflowsConfig>({
  configSchema: workflowsConfigSchema,
  register(ctx) {
    const config = () => ctx.config;
    // Runs of another process run (pid and start time) that are still open were cut off by a crash or a kill.
    const boot = `${process.pid}:${ctx.kernel.startedAt.getTime()}`;
    const store = new WorkflowStore(ctx.db);
    const runs = new RunStore(ctx.db, boot);
    const runner = new Runner({
      store,
      runs,
      config,
      events: ctx.events,
      log: ctx.log,
      queue: () => ctx.use(taskQueue),
      registry: () => ctx.use(agentRegistry),
    });
    ctx.provide(workflowRunner, runner);
    const templates = new TemplateCatalog(ctx.db, () => ctx.tryUse(registryService), ctx.log);
    ctx.events.subscribe('hub.synced', async (event) => {
      if (event.data.registry === 'hub') templates.forgetRegistry();
    });
    return {
      start() {
        const failed = runs.failInterrupted();
        if (failed) ctx.log.warn({ runs: failed }, 'workflow runs interrupted by the last stop are marked Failed');
      },
      stop: () => runner.stopAll(),
      routes(app) {
        workflowRoutes(app, { store, runner, config, events: ctx.events });
        runRoutes(app, store, runs, runner);
        templateRoutes(app, { templates, store, agents: () => ctx.use(agentRegistry), config });
      },
    };
  },
});
