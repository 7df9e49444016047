import { notFound, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { Usage } from '../services/usage.ts';
import { usdBudget } from '../config.ts';

const limitsBody = {
  type: 'object',
  properties: {
    daily_limit_usd: { ...usdBudget, description: 'USD per UTC day; 0 = unlimited, at most 1000000' },
    monthly_limit_usd: { ...usdBudget, description: 'USD per UTC month; 0 = unlimited, at most 1000000' },
  },
  anyOf: [{ required: ['daily_limit_usd'] }, { required: ['monthly_limit_usd'] }],
} as const;

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

export function budgetRoutes(app: Routes, usage: Usage, agents: () => AgentRegistry | undefined): void {
  /** The agent's name and hourly cap; 400 for a malformed id, 404 for an agent the service does not know. */
  const agentOf = async (id: string): Promise<{ name: string; maxTokens: number }> => {
    requireUuid(id, 'agent id');
    const registry = agents();
    const agent = registry?.get(id);
    if (agent) return { name: agent.name, maxTokens: agent.maxLlmTokensPerHour };
    // Without the agents module, agents are known through their recorded usage only.
    const seen = registry ? undefined : (await usage.ranking()).find((r) => r.agent_id === id);
    if (seen) return { name: seen.agent_name, maxTokens: 0 };
    throw notFound(`agent '${id}' not found`);
  };

  app.get('/api/budget', { schema: { summary: 'Global daily and monthly budget and spend' } }, async () => usage.globalBudget());
  app.put('/api/budget', { schema: { summary: 'Sets the global budget (0 = unlimited)', body: limitsBody } }, async (request) => {
    await usage.setLimits(undefined, request.body);
    request.log.info({ budget: request.body }, 'global budget changed');
    return usage.globalBudget();
  });
  app.get('/api/budget/agents', { schema: { summary: 'Agents ranked by spend' } }, async () => usage.ranking());
  app.get('/api/budget/agents/:id', { schema: { summary: "An agent's budget, spend and hourly token quota", params: idParams } }, async (request) => {
    const agent = await agentOf(request.params.id);
    return usage.agentBudget(request.params.id, agent.name, agent.maxTokens);
  });
  app.put('/api/budget/agents/:id', { schema: { summary: "Sets an agent's budget (0 = unlimited)", params: idParams, body: limitsBody } }, async (request) => {
    const agent = await agentOf(request.params.id);
    await usage.setLimits(request.params.id, request.body);
    request.log.info({ agentId: request.params.id, budget: request.body }, 'agent budget changed');
    return usage.agentBudget(request.params.id, agent.name, agent.maxTokens);
  });
}
