import { defineModule } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { hubEvents, registryService } from '@talon/hub';
import { taskQueue } from '@talon/tasks';
import { workflowEvents, workflowRunner } from '@talon/workflows';
import { workflowsConfigSchema, type WorkflowsConfig } from './config.ts';
import { WorkflowStore } from './services/store.ts';
import { ENDED_TOPIC, RunStore } from './services/runs.ts';
import { RunWaits } from './services/run-waits.ts';
import { CANCEL_TOPIC, Runner } from './services/runner.ts';
import { workflowRoutes } from './routes/workflows.ts';
import { runRoutes } from './routes/runs.ts';
import { TemplateCatalog } from './services/templates.ts';
import { templateRoutes } from './routes/templates.ts';

/** How often runs waited for here are looked at anyway, should a change note not arrive (see RunWaits). */
const WAIT_POLL_MS = 5000;

export default defineModule<WorkflowsConfig>({
  configSchema: workflowsConfigSchema,
  events: [workflowEvents],
  register(ctx) {
    const config = () => ctx.config;
    const events = ctx.events.of(workflowEvents);
    const boot = `${process.pid}:${ctx.kernel.startedAt.getTime()}`;
    const store = new WorkflowStore(ctx.store);
    const runs = new RunStore({
      store: ctx.store,
      changes: ctx.changes,
      node: ctx.nodes.id,
      boot,
      onStepLost: (err, rows) => ctx.log.error({ err, rows }, 'workflow step rows could not be written'),
    });
    const waits = new RunWaits(runs, ctx.signal, ctx.log);
    const runner = new Runner({
      store,
      runs,
      config,
      events,
      log: ctx.log,
      queue: () => ctx.use(taskQueue),
      registry: () => ctx.use(agentRegistry),
      nodes: ctx.nodes,
      changes: ctx.changes,
      waits,
    });
    ctx.provide(workflowRunner, runner);
    const templates = new TemplateCatalog(ctx.store, () => ctx.tryUse(registryService), ctx.log);
    // Another node asks to cancel a run this copy executes.
    ctx.changes.on(CANCEL_TOPIC, (runId) => runner.cancelHere(runId));
    ctx.events.of(hubEvents).subscribe('hub.synced', async (event) => {
      if (event.data.registry === 'hub') templates.forgetRegistry();
    });
    return {
      async start() {
        const failed = await runs.failOrphans(new Set(await ctx.nodes.live()));
        if (failed) ctx.log.warn({ runs: failed }, 'workflow runs interrupted by the last stop are marked Failed');
        // Runs of a node that dies (or stops) from now on were cut off: one live node marks them Failed. Another
        // node's live runs are never touched. Registered once started: the handler uses the store.
        ctx.nodes.onDead(async (node) => {
          const n = await runs.failInterrupted(node);
          if (n) ctx.log.warn({ runs: n, node }, 'workflow runs of a gone process are marked Failed (interrupted)');
          // This process does not hear its own notes: its callers waiting for those runs are told here.
          if (n) await waits.heard('');
        });
        // Another process ended runs that callers here wait for.
        ctx.changes.on(ENDED_TOPIC, (runId) => waits.heard(runId));
        ctx.setInterval(() => waits.poll(), WAIT_POLL_MS);
      },
      async stop() {
        await runner.stopAll();
        await runs.flush();
      },
      routes(app) {
        workflowRoutes(app, { store, runner, config, events });
        runRoutes(app, store, runs, runner);
        templateRoutes(app, { templates, store, agents: () => ctx.use(agentRegistry), config });
      },
    };
  },
});
