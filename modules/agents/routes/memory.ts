/**
 * KV memory export/import of one agent, through the memory module's kvMemory
 * (503 when that module is not loaded).
 *   GET  …/memory/export → {agent_id, entries: [{key, value}], count}
 *   POST …/memory/import  {entries: [{key, value}]}, {kv_pairs: [...]} (the memory module's export document)
 *                         or a plain {key: value} object → {status: "imported", count}
 */
import { HttpError, type Routes } from '@talon/module-sdk';
import { kvMemory, type KvEntry, type KvMemory } from '../../memory/api.ts';
import type { AgentServices } from '../services/context.ts';
import { agentParam, idParams } from './common.ts';

const entryList = {
  type: 'array',
  items: { type: 'object', properties: { key: { type: 'string', minLength: 1 }, value: {} }, required: ['key', 'value'] },
} as const;

export function memoryRoutes(app: Routes, s: AgentServices): void {
  const memory = (): KvMemory => {
    const kv = s.ctx.tryUse(kvMemory);
    if (!kv) throw new HttpError(503, 'memory is not available: the memory module is not loaded');
    return kv;
  };

  app.get('/api/agents/:id/memory/export', { schema: { summary: "All of the agent's KV memory", params: idParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    const entries = memory().exportAll(agent.id);
    return { agent_id: agent.id, entries, count: entries.length };
  });

  app.post(
    '/api/agents/:id/memory/import',
    {
      schema: {
        summary: 'Import KV memory entries (keys not named stay)',
        params: idParams,
        body: {
          type: 'object',
          properties: { entries: entryList, kv_pairs: entryList },
          additionalProperties: true,
        },
      },
    },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const body = request.body as { entries?: KvEntry[]; kv_pairs?: KvEntry[] } & Record<string, unknown>;
      const entries: KvEntry[] = body.entries ?? body.kv_pairs ?? Object.entries(body).map(([key, value]) => ({ key, value }));
      const count = memory().importAll(agent.id, entries);
      return { status: 'imported', agent_id: agent.id, count };
    },
  );
}
