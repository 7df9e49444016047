import { notFound, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { Dreams } from '../services/dreams.ts';

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const enabledBody = { type: 'object', properties: { enabled: { type: 'boolean' } }, required: ['enabled'], additionalProperties: false } as const;

export function dreamRoutes(app: Routes, dreams: Dreams, agents: () => AgentRegistry | undefined): void {
  const tags = ['memory'];
  const agentOf = (id: string) => {
    const agentId = requireUuid(id, 'agent id');
    if (!agents()?.get(agentId)) throw notFound(`Agent '${id}' not found`);
    return agentId;
  };
  app.get('/api/auto-dream/status', { schema: { summary: 'Scheduled memory consolidation per agent', tags }, config: { quiet: true } }, async () =>
    dreams.status(),
  );
  app.put(
    '/api/auto-dream/agents/:id/enabled',
    { schema: { summary: "Switches an agent's auto-dream on or off", tags, params: idParams, body: enabledBody } },
    async (request) => {
      await dreams.setEnabled(agentOf(request.params.id), request.body.enabled);
      return { agent_id: request.params.id, auto_dream_enabled: request.body.enabled };
    },
  );
  app.post('/api/auto-dream/agents/:id/trigger', { schema: { summary: "Consolidates an agent's memory now", tags, params: idParams } }, async (request) =>
    dreams.run(agentOf(request.params.id)),
  );
}
