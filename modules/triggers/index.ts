import { defineModule } from '@talon/module-sdk';
import { agentEvents, agentRegistry, agentTools } from '@talon/agents';
import { taskBoard, taskQueue } from '@talon/tasks';
import { workflowEvents, workflowRunner } from '@talon/workflows';
import { deliveries, ownedTriggers as ownedTriggersRef, triggerHooks } from '@talon/triggers';
import { triggersConfigSchema, type TriggersConfig } from './config.ts';
import { TriggerStore } from './services/store.ts';
import { loadAndFollow } from './services/sync.ts';
import { Engine } from './services/engine.ts';
import { ChainTracker } from './services/chain.ts';
import { DeliveryLog } from './services/deliveries.ts';
import { Firing } from './services/fire.ts';
import { known } from './services/known.ts';
import { triggerRoutes } from './routes/triggers.ts';
import { deliveryRoutes } from './routes/deliveries.ts';
import { ownedTriggers } from './services/owned.ts';

const PRUNE_MS = 3_600_000;

export default defineModule<TriggersConfig>({
  configSchema: triggersConfigSchema,
  hooks: [triggerHooks],
  register(ctx) {
    const config = () => ctx.config;
    const agents = () => ctx.use(agentRegistry);
    const workflows = () => ctx.tryUse(workflowRunner);
    const store = new TriggerStore(ctx.store, ctx.changes);
    const engine = new Engine({
      defaultCooldownSecs: () => ctx.config.cooldown_secs,
      maxPerEvent: () => ctx.config.max_fires_per_event,
      agentName: (id) => ctx.tryUse(agentRegistry)?.get(id)?.name,
      onBudgetExceeded: (event, skipped) => ctx.log.warn({ event: event.type, skipped }, 'max_fires_per_event reached: further triggers skipped'),
      onMatchError: (trigger, err) => ctx.log.error({ err, trigger: trigger.id }, 'trigger pattern failed on an event; the other triggers go on'),
    });
    const log = new DeliveryLog({
      store: ctx.store,
      log: ctx.log,
      agents: () => ctx.tryUse(agentRegistry),
      homeChannel: (d) => ctx.hooks.get(triggerHooks).homeChannel.promise(d),
      kept: () => ctx.config.deliveries_kept,
    });
    ctx.provide(deliveries, log);
    ctx.provide(ownedTriggersRef, ownedTriggers(store, engine, agents));
    const firing = new Firing({
      engine,
      store,
      chain: new ChainTracker(),
      queue: () => ctx.use(taskQueue),
      board: () => ctx.tryUse(taskBoard),
      agents,
      tools: () => ctx.tryUse(agentTools),
      workflows,
      deliveries: log,
      config,
      log: ctx.log,
      node: ctx.nodes.id,
    });
    // A dead process's fires whose turns never reported are resumed here (one process wins each).
    ctx.nodes.onDead(async (dead) => {
      for (const fire of await log.takeFiresOf(dead, ctx.nodes.id)) firing.resume(fire);
    });
    // Every event is evaluated; the handler only decides, records and queues, so it keeps up with the bus. Local
    // events only (the default): a fire acts, so each event is evaluated by the process where it happened.
    ctx.events.subscribe('*', (event) => firing.handle(known(event)), { queue: 10_000 });
    const follow = async (id: string) => engine.follow(id, await store.get(id));
    // A killed agent's triggers go; triggers aimed at it, or at a deleted workflow, are disabled.
    ctx.events.of(agentEvents).subscribe('agent.terminated', async (event) => {
      for (const id of await store.retireAgent(event.data.agentId)) await follow(id);
    });
    ctx.events.of(workflowEvents).subscribe('workflow.deleted', async (event) => {
      for (const id of await store.retireWorkflow(event.data.workflowId)) await follow(id);
    });
    return {
      async start() {
        // Another process created, changed, fired or deleted a trigger: this engine takes it as stored.
        await loadAndFollow({ engine, store, changes: ctx.changes, follow });
        // Fires of processes that are gone (also those that ended while none ran) whose turns never reported.
        const taken = await log.takeFiresAllBut(await ctx.nodes.live(), ctx.nodes.id);
        if (taken.length) ctx.log.warn({ fires: taken.length }, 'trigger fires whose process ended before their turn reported: resumed here');
        for (const fire of taken) firing.resume(fire);
        const prune = () => store.pruneCooldowns(Date.now(), ctx.config.cooldown_secs);
        await prune();
        ctx.setInterval(prune, PRUNE_MS);
      },
      routes(app) {
        triggerRoutes(app, { store, engine, agents, workflows });
        deliveryRoutes(app, log);
      },
    };
  },
});
