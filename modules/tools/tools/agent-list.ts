import type { ToolFactory } from '../services/deps.ts';
import { ok } from '../services/result.ts';

export const agentListTool: ToolFactory = (deps) => ({
  name: 'agent_list',
  description: 'List all currently running agents with their IDs, names, states, and models.',
  aliases: ['sessions_list', 'agents_list'],
  source: 'builtin',
  inputSchema: { type: 'object', properties: {} },
  async execute() {
    const agents = deps.registry().list();
    if (!agents.length) return ok('No agents are running.');
    const rows = agents.map((a) => `- ${a.name} (id: ${a.id}, state: ${a.state}, model: ${a.model.provider}/${a.model.model})`);
    return ok(`${agents.length} agent(s):\n${rows.join('\n')}`);
  },
});
