/**
 * Hand instances over time: activate (spawn the agents, register their schedules and triggers; on any failure undo
 * all of it and keep the instance as `Error: <message>`), pause (stop the agents' turns and background work), resume,
 * deactivate (remove everything the instance created), and the check after a restart.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { HttpError, conflict, notFound, type EventChannel } from '@talon/module-sdk';
import type { AgentRegistry, AgentRunner } from '@talon/agents';
import type { HandDefinition, handEvents, HandInstance } from '@talon/hands';
import type { SchedulerJobs } from '@talon/scheduler';
import type { OwnedTriggers } from '@talon/triggers';
import type { HandCatalog } from './catalog.ts';
import { agentManifest } from './agent-manifest.ts';
import { isLive, type InstanceStore } from './instances.ts';
import { requirementViews, requirementsMet } from './requirements.ts';
import type { HandSettings } from './settings.ts';

export interface LifecycleDeps {
  catalog: HandCatalog;
  instances: InstanceStore;
  settings: HandSettings;
  agents: () => AgentRegistry;
  runner: () => AgentRunner;
  jobs: () => SchedulerJobs | undefined;
  triggers: () => OwnedTriggers | undefined;
  requireRequirements: () => boolean;
  maxSkillChars: () => number;
  events: EventChannel<typeof handEvents>;
  log: Logger;
}

type Created = Pick<HandInstance, 'agents' | 'jobs' | 'triggers'>;

const statusOf = (err: unknown) => (err instanceof HttpError || (err as { name?: string })?.name === 'HttpError' ? (err as HttpError).statusCode : 500);

export class HandLifecycle {
  constructor(private readonly deps: LifecycleDeps) {}

  require(id: string): HandInstance {
    const instance = this.deps.instances.get(id);
    if (!instance) throw notFound(`hand instance '${id}' not found`);
    return instance;
  }

  async activate(handId: string, options: { config?: Record<string, unknown>; force?: boolean }): Promise<HandInstance> {
    const def = this.deps.catalog.get(handId);
    if (!def) throw notFound(`hand '${handId}' not found`);
    if (options.config) this.deps.settings.check(def, options.config);
    const live = this.deps.instances.ofHand(handId).find(isLive);
    if (live) throw conflict(`hand '${handId}' already has an instance (${live.id}, ${live.status}); deactivate it first`);
    if (options.config) await this.deps.settings.update(def, options.config);
    const requirements = requirementViews(def);
    const met = requirementsMet(requirements);
    if (!met && !options.force && this.deps.requireRequirements()) {
      const unmet = requirements.filter((r) => !r.optional && !r.satisfied).map((r) => `${r.label} (${r.type} ${r.check_value})`);
      throw new HttpError(
        409,
        `hand '${handId}' has unmet requirements: ${unmet.join('; ')} (POST /api/hands/${handId}/check-deps; activate with force to start degraded)`,
        {
          extra: { requirements },
        },
      );
    }
    const now = new Date().toISOString();
    const base: HandInstance = {
      id: randomUUID(),
      hand_id: handId,
      status: 'Active',
      agents: {},
      jobs: [],
      triggers: [],
      degraded: !met,
      events_processed: 0,
      errors: 0,
      last_error: null,
      activated_at: now,
      updated_at: now,
    };
    const created: Created = { agents: {}, jobs: [], triggers: [] };
    try {
      await this.create(def, base.id, created);
    } catch (err) {
      await this.undo(created);
      const message = (err as Error).message;
      const failed = await this.deps.instances.save({ ...base, status: `Error: ${message}`, last_error: message });
      this.deps.events.publish('hand.failed', { instanceId: failed.id, handId, error: message });
      this.deps.log.warn({ hand: handId, instance: failed.id, err: message }, 'hand activation failed; everything it created was removed');
      const status = statusOf(err);
      throw new HttpError(status < 500 ? status : 503, `hand '${handId}' could not be activated: ${message}`, {
        extra: { instance_id: failed.id, status: failed.status },
      });
    }
    let instance: HandInstance;
    try {
      // Checked again in the write: another process may have activated the hand since the check above.
      instance = await this.deps.instances.save({ ...base, ...created }, { exclusive: true });
    } catch (err) {
      await this.undo(created);
      throw err;
    }
    this.deps.events.publish('hand.activated', { instanceId: instance.id, handId, agentIds: Object.values(created.agents) });
    return instance;
  }

  /** Spawns every role, then the schedules and triggers; records each thing as it is made (for undo). */
  private async create(def: HandDefinition, instanceId: string, created: Created): Promise<void> {
    const registry = this.deps.agents();
    for (const spec of def.agents) {
      const agent = await registry.spawn({ manifestToml: agentManifest(def, spec, instanceId, this.deps.maxSkillChars()) });
      created.agents[spec.role] = agent.id;
    }
    if (def.schedules.length) {
      const jobs = this.deps.jobs();
      if (!jobs) throw new HttpError(503, 'the hand declares schedules and the scheduler module is not running');
      for (const s of def.schedules) {
        const job = await jobs.create(
          { name: `${def.id}: ${s.name}`, agentId: created.agents[s.role], schedule: s.schedule, tz: s.tz, prompt: s.prompt },
          `hand:${instanceId}`,
        );
        created.jobs.push(job.id);
      }
    }
    if (def.triggers.length) {
      const triggers = this.deps.triggers();
      if (!triggers) throw new HttpError(503, 'the hand declares triggers and the triggers module is not running');
      for (const t of def.triggers) {
        const trigger = await triggers.create({
          agentId: created.agents[t.role],
          pattern: t.pattern,
          promptTemplate: t.prompt_template,
          maxFires: t.max_fires,
        });
        created.triggers.push(trigger.id);
      }
    }
  }

  /** Removes what an instance made; each step goes on when one fails (a thing already gone is no failure). */
  private async undo(created: Created): Promise<string[]> {
    const problems: string[] = [];
    const attempt = async (what: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        problems.push(`${what}: ${(err as Error).message}`);
      }
    };
    for (const id of created.triggers) await attempt(`trigger ${id}`, () => this.deps.triggers()?.remove(id));
    for (const id of created.jobs) await attempt(`job ${id}`, () => this.deps.jobs()?.remove(id));
    for (const id of Object.values(created.agents)) await attempt(`agent ${id}`, () => this.deps.agents().kill(id));
    if (problems.length) this.deps.log.warn({ problems }, 'hand cleanup left problems');
    return problems;
  }

  async pause(id: string): Promise<HandInstance> {
    const instance = this.require(id);
    if (instance.status !== 'Active') throw conflict(`hand instance '${id}' is ${instance.status}; only an Active instance can be paused`);
    await this.setBackground(instance, false);
    const next = await this.deps.instances.save({ ...instance, status: 'Paused' });
    this.deps.events.publish('hand.paused', { instanceId: id, handId: instance.hand_id });
    return next;
  }

  async resume(id: string): Promise<HandInstance> {
    const instance = this.require(id);
    if (instance.status !== 'Paused') throw conflict(`hand instance '${id}' is ${instance.status}; only a Paused instance can be resumed`);
    await this.setBackground(instance, true);
    const next = await this.deps.instances.save({ ...instance, status: 'Active' });
    this.deps.events.publish('hand.resumed', { instanceId: id, handId: instance.hand_id });
    return next;
  }

  /** Paused: running turns stop, the agents refuse new ones, schedules and triggers are off. Resumed: all back on. */
  private async setBackground(instance: HandInstance, on: boolean): Promise<void> {
    const registry = this.deps.agents();
    for (const agentId of Object.values(instance.agents)) {
      if (!registry.get(agentId)) continue;
      if (!on) this.deps.runner().stop(agentId);
      await registry.setState(agentId, on ? 'Running' : 'Stopped');
    }
    for (const job of instance.jobs) await this.deps.jobs()?.setEnabled(job, on);
    for (const trigger of instance.triggers) await this.deps.triggers()?.setEnabled(trigger, on);
  }

  async deactivate(id: string): Promise<{ instance: HandInstance; problems: string[] }> {
    const instance = this.require(id);
    for (const agentId of Object.values(instance.agents)) this.deps.runner().stop(agentId);
    // The record goes first: the agents' termination events then find no instance to mark as broken.
    await this.deps.instances.remove(id);
    const problems = await this.undo(instance);
    this.deps.events.publish('hand.deactivated', { instanceId: id, handId: instance.hand_id });
    return { instance, problems };
  }

  /** An agent of a live instance was killed outside the hand: the instance is broken (it says which agent). */
  async agentGone(agentId: string, name: string): Promise<void> {
    const instance = this.deps.instances.ofAgent(agentId);
    if (!instance || !isLive(instance)) return;
    const message = `agent '${name}' was removed outside the hand`;
    await this.deps.instances.save({ ...instance, status: `Error: ${message}`, last_error: message });
  }

  /** After a restart: Active and Paused instances stay as they were when their agents are still there. */
  async restore(): Promise<{ live: number; broken: number }> {
    const registry = this.deps.agents();
    let live = 0;
    let broken = 0;
    for (const instance of this.deps.instances.list().filter(isLive)) {
      const missing = Object.entries(instance.agents).filter(([, agentId]) => !registry.get(agentId));
      if (!missing.length && this.deps.catalog.get(instance.hand_id)) {
        live++;
        continue;
      }
      broken++;
      const message = missing.length ? `agent of role '${missing[0][0]}' is missing after a restart` : `hand '${instance.hand_id}' is no longer installed`;
      await this.deps.instances.save({ ...instance, status: `Error: ${message}`, last_error: message });
    }
    return { live, broken };
  }
}
