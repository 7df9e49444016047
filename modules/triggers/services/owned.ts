/** The triggers.owned service: triggers other modules create (a hand's triggers), with the API's checks. */
import { notFound } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { OwnedTriggers, TriggerSummary } from '@talon/triggers';
import type { Engine } from './engine.ts';
import { normalizePattern } from './pattern.ts';
import type { Trigger, TriggerStore } from './store.ts';

const summary = (t: Trigger): TriggerSummary => ({ id: t.id, agent_id: t.agent_id, enabled: t.enabled, fire_count: t.fire_count });

export function ownedTriggers(store: TriggerStore, engine: Engine, agents: () => AgentRegistry): OwnedTriggers {
  return {
    async create(request) {
      const agent = agents().get(request.agentId);
      if (!agent) throw notFound(`agent '${request.agentId}' not found`);
      const trigger = await store.create({
        agent_id: agent.id,
        pattern: normalizePattern(request.pattern),
        prompt_template: request.promptTemplate,
        enabled: request.enabled ?? true,
        max_fires: request.maxFires ?? 0,
        cooldown_secs: null,
        session_mode: null,
        target_agent_id: null,
        workflow_id: null,
      });
      engine.put(trigger);
      return summary(trigger);
    },
    async get(id) {
      const t = await store.get(id);
      return t && summary(t);
    },
    async setEnabled(id, enabled) {
      const t = await store.get(id);
      if (!t) return false;
      engine.put(await store.update(id, { ...t, enabled }, false));
      return true;
    },
    async remove(id) {
      engine.remove(id);
      return store.delete(id);
    },
  };
}
