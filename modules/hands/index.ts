import path from 'node:path';
import { defineModule, type EventCatalogue, type EventOf, type TalonEvent } from '@talon/module-sdk';
import { agentEvents, agentHooks, agentRegistry, agentRunner } from '@talon/agents';
import { approvalEvents } from '@talon/approvals';
import { dreamEvents } from '@talon/auto-dream';
import { handEvents, handsCatalog } from '@talon/hands';
import { registryService } from '@talon/hub';
import { kvMemory, memoryEvents } from '@talon/memory';
import { pluginEvents } from '@talon/plugins';
import { promptScanner } from '@talon/prompt-guard';
import { scheduleEvents, schedulerJobs } from '@talon/scheduler';
import { taintEvents } from '@talon/taint';
import { taskEvents } from '@talon/tasks';
import { sandboxService } from '@talon/tools';
import { ownedTriggers } from '@talon/triggers';
import { usageEvents } from '@talon/usage';
import { handsConfigSchema, type HandsConfig } from './config.ts';
import { HandCatalog } from './services/catalog.ts';
import { INSTANCES, InstanceStore } from './services/instances.ts';
import { HandSettings, SETTINGS } from './services/settings.ts';
import { HandInstaller } from './services/install.ts';
import { HandLifecycle } from './services/lifecycle.ts';
import { handRoutes } from './routes/hands.ts';
import { instanceRoutes } from './routes/instances.ts';

/**
 * The error an event reports for an agent, if it is one. An event's name says whose it is (only its owner publishes
 * it), so the name gives the payload's type.
 */
function eventError(event: TalonEvent): string | undefined {
  const e = event as EventOf<typeof agentEvents, 'agent.crashed'> | EventOf<typeof scheduleEvents, 'schedule.fired'>;
  if (e.type === 'agent.crashed') return e.data.error;
  if (e.type === 'schedule.fired' && e.data.status !== 'ok') return `schedule '${e.data.name}' failed`;
  return undefined;
}

/**
 * The catalogues whose events name an agent (`agentId`): each such event counts for the instance that agent belongs
 * to (its stats). Their owners are declared in module.toml (depends, optional_depends, or consumes "<owner>.events").
 */
const AGENT_EVENT_CATALOGUES: readonly EventCatalogue[] = [
  agentEvents,
  scheduleEvents,
  taskEvents,
  memoryEvents,
  approvalEvents,
  usageEvents,
  taintEvents,
  pluginEvents,
  dreamEvents,
];

/** Change-feed topic: the installed hand folders changed (installed, uninstalled, reloaded). */
const DEFINITIONS = 'definitions';

export default defineModule<HandsConfig>({
  configSchema: handsConfigSchema,
  events: [handEvents],
  register(ctx) {
    const customDir = () => ctx.config.dir || path.join(ctx.home, 'hands');
    const catalog = new HandCatalog(path.join(ctx.dir, 'bundled'), customDir);
    const instances = new InstanceStore(ctx.store, ctx.changes, (err, events) => ctx.log.warn({ err, events }, 'hand event counts not written'));
    const settings = new HandSettings(ctx.store, ctx.changes);
    const installer = new HandInstaller({
      catalog,
      customDir,
      installRoots: () => ctx.config.install_roots,
      home: ctx.home,
      scanner: () => ctx.use(promptScanner),
      registry: () => ctx.tryUse(registryService),
      stagingDir: () => path.join(ctx.dataDir, 'staging'),
    });
    const lifecycle = new HandLifecycle({
      catalog,
      instances,
      settings,
      agents: () => ctx.use(agentRegistry),
      runner: () => ctx.use(agentRunner),
      jobs: () => ctx.tryUse(schedulerJobs),
      triggers: () => ctx.tryUse(ownedTriggers),
      requireRequirements: () => ctx.config.require_requirements,
      maxSkillChars: () => ctx.config.max_skill_chars,
      events: ctx.events.of(handEvents),
      log: ctx.log,
    });
    ctx.provide(handsCatalog, {
      definitions: () => catalog.list(),
      definition: (id) => catalog.get(id),
      instances: () => instances.list(),
      instanceOfAgent: (agentId) => instances.ofAgent(agentId),
    });

    // Settings can change while an instance runs: they join the prompt at each model call, not at spawn.
    ctx.hooks.tap(agentHooks).beforeModelCall.tap('hand-settings', (call) => {
      const instance = instances.ofAgent(call.agent.id);
      const def = instance && catalog.get(instance.hand_id);
      const block = def ? settings.promptBlock(def) : '';
      return block ? { ...call, system: `${call.system}\n\n${block}` } : call;
    });
    ctx.events.of(agentEvents).subscribe('agent.terminated', (event) => lifecycle.agentGone(event.data.agentId, event.data.name));
    const countEvent = (event: TalonEvent) => {
      const agentId = (event.data as { agentId?: unknown }).agentId;
      const instance = typeof agentId === 'string' ? instances.ofAgent(agentId) : undefined;
      if (instance) instances.count(instance.id, eventError(event));
    };
    for (const catalogue of AGENT_EVENT_CATALOGUES) ctx.events.of(catalogue).subscribe(catalogue.types, countEvent, { queue: 10_000 });

    return {
      async start() {
        // What other processes of the home change is read again here (heard from before the first read).
        ctx.changes.on(INSTANCES, () => instances.load());
        ctx.changes.on(SETTINGS, () => settings.load());
        ctx.changes.on(DEFINITIONS, () => void catalog.reload());
        const loaded = catalog.reload();
        await instances.load();
        await settings.load();
        const restored = await lifecycle.restore();
        ctx.log.info({ hands: loaded.total, unreadable: catalog.failures().length, instances: restored }, 'hands loaded');
      },
      stop: () => instances.flush(),
      routes(app) {
        handRoutes(app, {
          catalog,
          installer,
          instances,
          settings,
          sandbox: () => ctx.tryUse(sandboxService),
          depsTimeoutMs: () => ctx.config.deps_timeout_secs * 1000,
          workDir: path.join(ctx.dataDir, 'deps'),
          definitionsChanged: () => ctx.changes.note(DEFINITIONS),
        });
        instanceRoutes(app, { catalog, instances, lifecycle, kv: () => ctx.tryUse(kvMemory) });
      },
    };
  },
});
