import { defineModule } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { taskQueue } from '@talon/tasks';
import { workflowRunner } from '@talon/workflows';
import { deliveries } from '@talon/triggers';
import { schedulerHooks, schedulerJobs } from '@talon/scheduler';
import { schedulerConfigSchema, type SchedulerConfig } from './config.ts';
import { Schedules } from './services/spec.ts';
import { JobStore } from './services/jobs.ts';
import { Dispatcher } from './services/dispatch.ts';
import { Ticker } from './services/ticker.ts';
import { Scheduler } from './services/scheduler.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { cronRoutes } from './routes/cron.ts';
import { ownedJobs } from './services/owned.ts';

export default defineModule<SchedulerConfig>({
  configSchema: schedulerConfigSchema,
  hooks: [schedulerHooks],
  register(ctx) {
    const config = () => ctx.config;
    const jobs = new JobStore(ctx.db);
    const schedules = new Schedules();
    const workflows = () => ctx.tryUse(workflowRunner);
    const dispatcher = new Dispatcher({
      jobs,
      queue: () => ctx.use(taskQueue),
      workflows,
      deliveries: () => ctx.tryUse(deliveries),
      events: ctx.events,
      runHandler: (job) => ctx.hooks.get(schedulerHooks).handler.promise(job),
      config,
      log: ctx.log,
    });
    const ticker = new Ticker({ jobs, schedules, config, fire: (job, slots) => dispatcher.fire(job, slots), log: ctx.log, setTimer: ctx.setTimeout });
    const scheduler = new Scheduler(jobs, { schedules, config, agents: () => ctx.use(agentRegistry), workflows }, ticker, dispatcher);
    ctx.provide(schedulerJobs, ownedJobs(scheduler, jobs));

    // A killed agent's jobs stop (disabled with the reason, reassignable; or deleted: on_agent_killed).
    ctx.events.subscribe('agent.terminated', (event) => {
      const { agentId, name } = event.data;
      const n = jobs.retire('agent_id', agentId, `agent '${name}' (${agentId}) was killed`, ctx.config.on_agent_killed === 'delete');
      if (n) ctx.log.info({ agentId, jobs: n, action: ctx.config.on_agent_killed }, 'jobs of a killed agent stopped');
    });
    ctx.events.subscribe('workflow.deleted', (event) => {
      jobs.retire('workflow_id', event.data.workflowId, `workflow '${event.data.name}' was deleted`, false);
    });
    return {
      start: () => ticker.start(),
      stop: () => ticker.stop(),
      routes(app) {
        scheduleRoutes(app, scheduler);
        cronRoutes(app, scheduler);
      },
    };
  },
});
