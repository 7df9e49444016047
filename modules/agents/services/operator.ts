/**
 * The stand-in agent of a direct tool invocation without an agent. Tools that act for an agent
 * (requiresAgent) never run as it; the others run in its own workspace. It has no capabilities, so
 * anything that checks them (network, shell) refuses.
 */
import type { AgentRecord } from '@talon/agents';

/** The operator's id (no agent has it). */
export const OPERATOR_ID = '00000000-0000-0000-0000-000000000000';
const NIL = OPERATOR_ID;

export function operatorRecord(workspace: string): AgentRecord {
  return {
    id: NIL,
    name: 'operator',
    state: 'Running',
    mode: 'Normal',
    createdAt: new Date(0).toISOString(),
    sessionId: NIL,
    manifest: {
      name: 'operator',
      model: { provider: '', model: '' },
      capabilities: { tools: [], network: [], memory_read: [], memory_write: [], shell: [], agent_spawn: false },
      extra: {},
    },
    description: 'direct tool invocation without an agent',
    tags: [],
    systemPrompt: '',
    model: { provider: '', model: '' },
    tools: [],
    skills: [],
    mcpServers: [],
    identity: {},
    config: {},
    workspace,
    maxLlmTokensPerHour: 0,
  };
}
