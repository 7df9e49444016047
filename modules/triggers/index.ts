import { defineModule } from '@talon/module-sdk';
import { agentRegistry, agentTools } from '@talon/agents';
import { taskBoard, taskQueue } from '@talon/tasks';
import { workflowRunner } from '@talon/workflows';
import { deliveries, ownedTriggers as ownedTriggersRef, triggerHooks } from '@talon/triggers';
import { triggersConfigSchema, type TriggersConfig } from './config.ts';
import { TriggerStore } from './services/store.ts';
import { Engine } from './services/engine.ts';
import { ChainTracker } from './services/chain.ts';
import { DeliveryLog } from './services/deliveries.ts';
import { Firing } from './services/fire.ts';
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
    const store = new TriggerStore(ctx.db);
    const engine = new Engine({
      defaultCooldownSecs: () => ctx.config.cooldown_secs,
      maxPerEvent: () => ctx.config.max_fires_per_event,
      agentName: (id) => ctx.tryUse(agentRegistry)?.get(id)?.name,
      onBudgetExceeded: (event, skipped) => ctx.log.warn({ event: event.type, skipped }, 'max_fires_per_event reached: further triggers skipped'),
      onMatchError: (trigger, err) => ctx.log.error({ err, trigger: trigger.id }, 'trigger pattern failed on an event; the other triggers go on'),
    });
    const log = new DeliveryLog({
      db: ctx.db,
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
    });
    // Every event is evaluated; the handler only decides and queues, so it keeps up with the bus.
    ctx.events.subscribe('*', (event) => firing.handle(event), { queue: 10_000 });
    // A killed agent's triggers go; triggers aimed at it, or at a deleted workflow, are disabled.
    ctx.events.subscribe('agent.terminated', (event) => {
      for (const id of store.retireAgent(event.data.agentId)) {
        const t = store.get(id);
        if (t) engine.put(t);
        else engine.remove(id);
      }
    });
    ctx.events.subscribe('workflow.deleted', (event) => {
      for (const id of store.retireWorkflow(event.data.workflowId)) engine.put(store.get(id)!);
    });
    return {
      start() {
        engine.load(store.all(), store.cooldowns());
        const prune = () => store.pruneCooldowns(Date.now(), ctx.config.cooldown_secs);
        prune();
        ctx.setInterval(prune, PRUNE_MS);
      },
      routes(app) {
        triggerRoutes(app, { store, engine, agents, workflows });
        deliveryRoutes(app, log);
      },
    };
  },
});
