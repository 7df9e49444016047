/**
 * a2a_send: the agent tool to message an external A2A agent discovered by the
 * operator (POST /api/a2a/discover). The agent names it by name, id or URL;
 * the reply comes back as the tool result. Grant it like any tool.
 */
import type { ToolDefinition } from '@talon/agents';
import type { RemoteAgents } from './remote.ts';

const inputSchema = {
  type: 'object',
  properties: {
    agent: { type: 'string', minLength: 1, description: 'the external agent: its name, id or URL' },
    message: { type: 'string', minLength: 1, description: 'what to send' },
  },
  required: ['agent', 'message'],
  additionalProperties: false,
};

export function a2aSendTool(remote: RemoteAgents): ToolDefinition {
  const known = remote.list().map((a) => `${a.name}${a.description ? ` (${a.description.slice(0, 80)})` : ''}`);
  return {
    name: 'a2a_send',
    description: `Send a message to an external A2A agent and get its reply. Known agents: ${known.length ? known.join('; ') : 'none yet'}.`,
    inputSchema,
    source: 'a2a',
    requiresAgent: true,
    async execute(input) {
      try {
        const task = await remote.send(String(input.agent), String(input.message));
        const reply = task.result?.parts.map((p) => p.text).join('\n') ?? '';
        return { content: reply || `(no reply; task ${task.task_id} is ${task.status})`, isError: task.status === 'failed' };
      } catch (err) {
        return { content: `a2a_send failed: ${(err as Error).message}`, isError: true };
      }
    },
  };
}
