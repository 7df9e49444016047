import type { ToolFactory } from '../services/deps.ts';
import { findAgent } from '../services/agent-lookup.ts';
import { fail, failFrom, ok, requiredString } from '../services/result.ts';

/** Like the reference's max_agent_call_depth: A → B → C ... stops here, which also ends A → B → A loops. */
export const MAX_CALL_DEPTH = 5;

export const agentSendTool: ToolFactory = (deps) => {
  // Depth of each turn that agent_send started, by turn id, while it runs.
  const depths = new Map<string, number>();
  return {
    name: 'agent_send',
    requiresAgent: true,
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
      const depth = (depths.get(ctx.turnId) ?? 0) + 1;
      if (depth > MAX_CALL_DEPTH) return fail(`agent_send refused: the maximum agent call depth (${MAX_CALL_DEPTH}) is reached`);
      let childTurn: string | undefined;
      try {
        const result = await deps.runner().run({ agentId: agent.id, message, parentTurnId: ctx.turnId, signal: ctx.signal, origin: 'agent_send' }, (event) => {
          if (event.type === 'started') depths.set((childTurn = event.turnId), depth);
        });
        if (result.interrupted) return fail(`Agent '${agent.name}' was interrupted before finishing. Partial reply:\n${result.response}`);
        return ok(result.response);
      } catch (err) {
        return failFrom(err, `Failed to send the message to agent '${agent.name}'`);
      } finally {
        if (childTurn) depths.delete(childTurn);
      }
    },
  };
};
