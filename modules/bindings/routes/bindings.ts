import { badRequest, notFound, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { BindingStore } from '../services/store.ts';

const id = { type: 'string', minLength: 1, maxLength: 200 } as const;
const body = {
  type: 'object',
  properties: {
    agent: { type: 'string', minLength: 1, maxLength: 200, description: 'agent name or id' },
    match_rule: {
      type: 'object',
      properties: { channel: id, account_id: id, peer_id: id, guild_id: id, roles: { type: 'array', items: id, maxItems: 50 } },
      additionalProperties: false,
    },
  },
  required: ['agent', 'match_rule'],
  additionalProperties: false,
} as const;
const indexParams = { type: 'object', properties: { index: { type: 'integer', minimum: 0 } }, required: ['index'] } as const;

export function bindingRoutes(app: Routes, store: BindingStore, agents: () => AgentRegistry | undefined): void {
  const tags = ['bindings'];
  app.get('/api/bindings', { schema: { summary: 'Routing bindings, most specific first', tags } }, async () => {
    const bindings = store.list();
    return { bindings, total: bindings.length };
  });
  app.post('/api/bindings', { schema: { summary: 'Adds a binding', tags, body } }, async (request, reply) => {
    const { agent, match_rule } = request.body;
    if (!Object.values(match_rule).some((v) => (Array.isArray(v) ? v.length : v)))
      throw badRequest('match_rule needs at least one of channel, account_id, peer_id, guild_id, roles');
    const registry = agents();
    if (registry && !registry.get(agent.toLowerCase()) && !registry.findByName(agent)) throw notFound(`agent '${agent}' not found`);
    return reply.code(201).send({ status: 'created', binding: await store.add(agent, match_rule) });
  });
  app.delete(
    '/api/bindings/:index',
    { schema: { summary: 'Removes the binding at this position of the list', tags, params: indexParams } },
    async (request, reply) => {
      if (!(await store.remove(request.params.index))) throw notFound(`no binding at index ${request.params.index}`);
      return reply.code(204).send();
    },
  );
}
