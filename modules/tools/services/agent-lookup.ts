import { isUuid } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry } from '@talon/agents';

/** An agent by UUID or by name. */
export function findAgent(registry: AgentRegistry, idOrName: string): AgentRecord | undefined {
  return isUuid(idOrName) ? registry.get(idOrName) : registry.findByName(idOrName);
}
