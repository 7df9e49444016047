import { notFound, requireUuid, type Routes } from '@talon/module-sdk';
import type { KvStore } from '../services/kv.ts';
import { agentParams } from './schemas.ts';

const keyParams = {
  type: 'object',
  properties: { id: { type: 'string' }, key: { type: 'string' } },
  required: ['id', 'key'],
} as const;

const putBody = {
  type: 'object',
  properties: { value: { description: 'any JSON value' } },
  required: ['value'],
  additionalProperties: false,
} as const;

/** GET/PUT/DELETE /api/memory/agents/{id}/kv[/{key}]: per-agent key-value memory. */
export function kvRoutes(app: Routes, kv: KvStore): void {
  app.get('/api/memory/agents/:id/kv', { schema: { summary: 'All key-value pairs of an agent', params: agentParams } }, async (request) => {
    const agentId = requireUuid(request.params.id, 'agent id');
    return { kv_pairs: await kv.list(agentId) };
  });

  app.get('/api/memory/agents/:id/kv/:key', { schema: { summary: 'One key-value pair', params: keyParams } }, async (request) => {
    const agentId = requireUuid(request.params.id, 'agent id');
    const entry = await kv.get(agentId, request.params.key);
    if (!entry) throw notFound(`key '${request.params.key}' not found`);
    return entry;
  });

  app.put('/api/memory/agents/:id/kv/:key', { schema: { summary: 'Creates or overwrites a key', params: keyParams, body: putBody } }, async (request) => {
    const agentId = requireUuid(request.params.id, 'agent id');
    await kv.set(agentId, request.params.key, request.body.value);
    return { status: 'stored', key: request.params.key };
  });

  app.delete('/api/memory/agents/:id/kv/:key', { schema: { summary: 'Deletes a key', params: keyParams } }, async (request) => {
    const agentId = requireUuid(request.params.id, 'agent id');
    if (!(await kv.delete(agentId, request.params.key))) throw notFound(`key '${request.params.key}' not found`);
    return { status: 'deleted', key: request.params.key };
  });
}
