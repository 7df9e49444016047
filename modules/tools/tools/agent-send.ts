import type { ToolFactory } from '../services/deps.ts';
import { findAgent } from '../services/agent-lookup.ts';
import { fail, failFrom, ok, requiredString } from '../services/result.ts';

export const agentSendTool: ToolFactory = (deps) => ({
  name: 'agent_send',
  description: "Send a message to another agent (by ID or name) and wait for its reply. Stopping this agent stops the other agent's turn too.",
  aliases: ['sessions_send', 'agent_message', 'sessions_spawn'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      agent_id: { type: 'string', description: 'UUID or name of the target agent' },
      message: { type: 'string', description: 'the message to send' },
    },
    required: ['agent_id', 'message'],
  },
  async execute(input, ctx) {
    let target: string;
    let message: string;
    try {
      target = requiredString(input, 'agent_id', 'agent_send');
      message = requiredString(input, 'message', 'agent_send');
    } catch (err) {
      return failFrom(err);
    }
    const agent = findAgent(deps.registry(), target);
    if (!agent) return fail(`Agent not found: ${target}`);
    if (agent.id === ctx.agent.id) return fail('agent_send cannot send a message to the calling agent itself');
    try {
      const result = await deps.runner().run({
        agentId: agent.id,
        message,
        parentTurnId: ctx.turnId,
        signal: ctx.signal,
        origin: 'agent_send',
      });
      if (result.interrupted) return fail(`Agent '${agent.name}' was interrupted before finishing. Partial reply:\n${result.response}`);
      return ok(result.response);
    } catch (err) {
      return failFrom(err, `Failed to send the message to agent '${agent.name}'`);
    }
  },
});
