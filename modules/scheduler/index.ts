import { defineModule } from '@talon/module-sdk';
import { agentEvents, agentRegistry } from '@talon/agents';
import { taskQueue } from '@talon/tasks';
import { workflowEvents, workflowRunner } from '@talon/workflows';
import { deliveries } from '@talon/triggers';
import { scheduleEvents, schedulerHooks, schedulerJobs } from '@talon/scheduler';
import { schedulerConfigSchema, type SchedulerConfig } from './config.ts';
import { Schedules } from './services/spec.ts';
import { JobStore } from './services/jobs.ts';
import { RunRows } from './services/runs.ts';
import { Takeover } from './services/takeover.ts';
import { Dispatcher } from './services/dispatch.ts';
import { Ticker } from './services/ticker.ts';
import { Scheduler } from './services/scheduler.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { cronRoutes } from './routes/cron.ts';
import { ownedJobs } from './services/owned.ts';

export default defineModule<SchedulerConfig>({
  configSchema: schedulerConfigSchema,
  hooks: [schedulerHooks],
  events: [scheduleEvents],
  register(ctx) {
    const config = () => ctx.config;
    const jobs = new JobStore(ctx.store);
    const runs = new RunRows(ctx.store);
    const schedules = new Schedules();
    const workflows = () => ctx.tryUse(workflowRunner);
    const node = ctx.nodes.id;
    const leaseMs = ctx.nodes.leaseMs;
    const dispatcher = new Dispatcher({
      store: ctx.store,
      jobs,
      runs,
      node,
      leaseMs,
      queue: () => ctx.use(taskQueue),
      workflows,
      deliveries: () => ctx.tryUse(deliveries),
      events: ctx.events.of(scheduleEvents),
      runHandler: (job) => ctx.hooks.get(schedulerHooks).handler.promise(job),
      config,
      log: ctx.log,
    });
    const fire = (job: Parameters<Dispatcher['fire']>[0], claimed: Parameters<Dispatcher['fire']>[1]) => dispatcher.fire(job, claimed);
    const ticker = new Ticker({
      store: ctx.store,
      jobs,
      runs,
      schedules,
      config,
      node,
      leaseMs,
      active: () => ctx.nodes.active,
      fire,
      log: ctx.log,
      setTimer: ctx.setTimeout,
    });
    const takeover = new Takeover({ store: ctx.store, jobs, runs, config, node, leaseMs, fire, log: ctx.log });
    const scheduler = new Scheduler(jobs, { schedules, config, agents: () => ctx.use(agentRegistry), workflows }, ticker, dispatcher, runs);
    ctx.provide(schedulerJobs, ownedJobs(scheduler, jobs));

    // A killed agent's jobs stop (disabled with the reason, reassignable; or deleted: on_agent_killed).
    ctx.events.of(agentEvents).subscribe('agent.terminated', async (event) => {
      const { agentId, name } = event.data;
      const n = await jobs.retire('agent_id', agentId, `agent '${name}' (${agentId}) was killed`, ctx.config.on_agent_killed === 'delete');
      if (n) ctx.log.info({ agentId, jobs: n, action: ctx.config.on_agent_killed }, 'jobs of a killed agent stopped');
    });
    ctx.events.of(workflowEvents).subscribe('workflow.deleted', async (event) => {
      await jobs.retire('workflow_id', event.data.workflowId, `workflow '${event.data.name}' was deleted`, false);
    });
    return {
      async start() {
        await takeover.sweep(new Set(await ctx.nodes.live()));
        // The runs of a node that dies (or stops) are taken over: run again or marked lost (one UPDATE wins each).
        ctx.nodes.onDead((gone) => takeover.takeOver(gone));
        await ticker.start();
        // The runs this node executes stay leased while it does.
        ctx.setInterval(
          async () => {
            if (dispatcher.busy) await runs.renew(node, Date.now() + leaseMs);
          },
          Math.max(50, Math.floor(leaseMs / 3)),
        );
      },
      stop: () => ticker.stop(),
      routes(app) {
        scheduleRoutes(app, scheduler);
        cronRoutes(app, scheduler);
      },
    };
  },
});
