import { isUuid } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry } from '@talon/agents';

export const MODEL_PREFIX = 'svc:';

/**
 * The agent a chat-completions `model` names: `svc:<name>` by name, a UUID by
 * id, a plain string as a name; anything else falls back to the first
 * registered agent (spec). Undefined only when there are no agents at all.
 */
export function resolveAgent(registry: AgentRegistry, model: string): AgentRecord | undefined {
  const agents = registry.list();
  if (!agents.length) return undefined;
  const name = model.startsWith(MODEL_PREFIX) ? model.slice(MODEL_PREFIX.length) : model;
  const found = (isUuid(model) ? registry.get(model) : undefined) ?? registry.findByName(name);
  return found ?? firstRegistered(agents);
}

function firstRegistered(agents: AgentRecord[]): AgentRecord {
  return agents.reduce((first, a) => (a.createdAt < first.createdAt ? a : first));
}
