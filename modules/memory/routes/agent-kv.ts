/**
 * KV memory export/import of one agent, under the agents API (the memory module owns them, so the
 * agents module needs no memory service):
 *   GET  /api/agents/{id}/memory/export → {agent_id, entries: [{key, value}], count}
 *   POST /api/agents/{id}/memory/import  {entries: [...]}, {kv_pairs: [...]} (the memory export document)
 *                                        or a plain {key: value} object → {status: "imported", agent_id, count}
 * The agent must exist: 404 for an unknown one, 503 while the agents module is not running.
 */
import { HttpError, notFound, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { KvEntry } from '../api.ts';
import type { KvStore } from '../services/kv.ts';
import { agentParams } from './schemas.ts';

const entryList = {
  type: 'array',
  items: { type: 'object', properties: { key: { type: 'string', minLength: 1 }, value: {} }, required: ['key', 'value'] },
} as const;

const importBody = {
  type: 'object',
  properties: { entries: entryList, kv_pairs: entryList },
  additionalProperties: true,
} as const;

export function agentKvRoutes(app: Routes, kv: KvStore, agents: () => AgentRegistry | undefined): void {
  /** The agent's id: 400 when it is no UUID, 404 when the agents module does not know it. */
  const agentId = (raw: string): string => {
    const id = requireUuid(raw, 'agent id');
    const registry = agents();
    if (!registry) throw new HttpError(503, 'agents are not available: the agents module is not running');
    if (!registry.get(id)) throw notFound(`agent '${id}' not found`);
    return id;
  };

  app.get('/api/agents/:id/memory/export', { schema: { summary: "All of the agent's KV memory", params: agentParams } }, async (request) => {
    const id = agentId(request.params.id);
    const entries = await kv.exportAll(id);
    return { agent_id: id, entries, count: entries.length };
  });

  app.post(
    '/api/agents/:id/memory/import',
    { schema: { summary: 'Import KV memory entries (keys not named stay)', params: agentParams, body: importBody } },
    async (request) => {
      const id = agentId(request.params.id);
      const body = request.body as { entries?: KvEntry[]; kv_pairs?: KvEntry[] } & Record<string, unknown>;
      const entries: KvEntry[] = body.entries ?? body.kv_pairs ?? Object.entries(body).map(([key, value]) => ({ key, value }));
      return { status: 'imported', agent_id: id, count: await kv.importAll(id, entries) };
    },
  );
}
