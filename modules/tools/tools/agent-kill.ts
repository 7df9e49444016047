import type { ToolFactory } from '../services/deps.ts';
import { findAgent } from '../services/agent-lookup.ts';
import { fail, failFrom, ok, requiredString } from '../services/result.ts';

export const agentKillTool: ToolFactory = (deps) => ({
  name: 'agent_kill',
  requiresAgent: true,
  description: 'Kill (terminate) another agent, by ID or name.',
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: { agent_id: { type: 'string', description: 'UUID or name of the agent' } },
    required: ['agent_id'],
  },
  async execute(input, ctx) {
    let target: string;
    try {
      target = requiredString(input, 'agent_id', 'agent_kill');
    } catch (err) {
      return failFrom(err);
    }
    const registry = deps.registry();
    const agent = findAgent(registry, target);
    if (!agent) return fail(`Agent not found: ${target}`);
    if (agent.id === ctx.agent.id) return fail('agent_kill cannot kill the calling agent itself');
    try {
      if (!(await registry.kill(agent.id))) return fail(`Agent not found: ${target}`);
    } catch (err) {
      return failFrom(err, `Failed to kill agent '${agent.name}'`);
    }
    return ok(`Agent '${agent.name}' (${agent.id}) killed.`);
  },
});
