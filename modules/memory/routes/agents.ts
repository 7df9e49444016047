import { badRequest, readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { MemoryConfig } from '../config.ts';
import { checkLevel } from '../services/entries.ts';
import type { Memory } from '../services/memory.ts';
import { LIST_PAGE, SEARCH_LIMIT } from './entries.ts';
import { agentParams, importBody, listQuery, relationBody, relationQuery, agentSearchQuery } from './schemas.ts';

const thresholdQuery = {
  type: 'object',
  properties: { threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1, description: 'similarity; default duplicate_threshold' } },
  additionalProperties: false,
} as const;

const agentId = (params: { id: string }) => requireUuid(params.id, 'agent id');

/** Per-agent proactive-memory endpoints under /api/memory/agents/{id}. */
export function agentRoutes(app: Routes, memory: Memory, config: () => MemoryConfig): void {
  app.get(
    '/api/memory/agents/:id',
    {
      schema: {
        summary: 'Proactive entries of an agent (paginated, newest first)',
        params: agentParams,
        querystring: {
          type: 'object',
          properties: {
            limit: listQuery.properties.limit,
            offset: listQuery.properties.offset,
            level: listQuery.properties.level,
            category: listQuery.properties.category,
            tag: listQuery.properties.tag,
          },
          additionalProperties: false,
        },
      },
    },
    async (request) => {
      const id = agentId(request.params);
      const q = request.query;
      const page = readPage(q, LIST_PAGE);
      const { items, total } = await memory.entries.list({ agentId: id, level: q.level, category: q.category, tag: q.tag }, page);
      return { agent_id: id, memories: items, total, offset: page.offset, limit: page.limit };
    },
  );

  app.delete('/api/memory/agents/:id', { schema: { summary: 'Deletes every proactive entry of an agent', params: agentParams } }, async (request) => {
    const id = agentId(request.params);
    return { status: 'deleted', agent_id: id, deleted: await memory.entries.deleteWhere(id) };
  });

  app.delete(
    '/api/memory/agents/:id/level/:level',
    {
      schema: {
        summary: 'Deletes the entries of one level (user, session, agent)',
        params: { type: 'object', properties: { id: { type: 'string' }, level: { type: 'string' } }, required: ['id', 'level'] },
      },
    },
    async (request) => {
      const id = agentId(request.params);
      const level = checkLevel(request.params.level);
      return { status: 'deleted', agent_id: id, level, deleted: await memory.entries.deleteWhere(id, level) };
    },
  );

  app.get(
    '/api/memory/agents/:id/search',
    { schema: { summary: 'Search limited to one agent', params: agentParams, querystring: agentSearchQuery } },
    async (request) => {
      const id = agentId(request.params);
      const q = request.query;
      if (q.q === undefined || !q.q.trim()) throw badRequest("query parameter 'q' is required");
      const limit = readPage({ limit: q.limit }, SEARCH_LIMIT).limit;
      const { hits, mode } = await memory.searchHits(q.q, { agentId: id, userId: q.user_id, sessionId: q.session_id, level: q.level, limit });
      return { agent_id: id, query: q.q, mode, results: hits, total: hits.length };
    },
  );

  app.get('/api/memory/agents/:id/stats', { schema: { summary: 'Statistics of one agent', params: agentParams } }, async (request) => {
    const id = agentId(request.params);
    return { agent_id: id, ...(await memory.stats(id)) };
  });

  app.get('/api/memory/agents/:id/count', { schema: { summary: 'Entry count', params: agentParams } }, async (request) => {
    const id = agentId(request.params);
    return { agent_id: id, ...(await memory.entries.countByLevel(id)) };
  });

  app.get(
    '/api/memory/agents/:id/duplicates',
    { schema: { summary: 'Groups of near-duplicate entries', params: agentParams, querystring: thresholdQuery } },
    async (request) => {
      const id = agentId(request.params);
      const threshold = request.query.threshold ?? config().duplicate_threshold;
      const groups = await memory.consolidator.duplicates(id, threshold, memory.embeddingTarget()?.model);
      return { agent_id: id, threshold, groups, total: groups.reduce((n, g) => n + g.duplicates.length, 0) };
    },
  );

  app.post(
    '/api/memory/agents/:id/consolidate',
    {
      schema: {
        summary: 'Merges near-duplicates into the most recently used entry (history kept)',
        params: agentParams,
        body: { type: 'object', properties: thresholdQuery.properties, additionalProperties: false },
      },
    },
    async (request) => {
      const id = agentId(request.params);
      const threshold = request.body.threshold ?? config().duplicate_threshold;
      return { agent_id: id, threshold, ...(await memory.consolidator.consolidate(id, threshold, memory.embeddingTarget()?.model)) };
    },
  );

  app.get(
    '/api/memory/agents/:id/relations',
    { schema: { summary: 'Queries the relation graph', params: agentParams, querystring: relationQuery } },
    async (request) => {
      const id = agentId(request.params);
      const { limit, offset, ...filters } = request.query;
      const page = readPage({ limit, offset }, { limit: 50, max: 500 });
      return { agent_id: id, ...(await memory.relations.query(id, filters, page)), offset: page.offset, limit: page.limit };
    },
  );

  app.post(
    '/api/memory/agents/:id/relations',
    { schema: { summary: 'Stores a relation (the same triple updates its confidence)', params: agentParams, body: relationBody } },
    async (request, reply) => {
      const id = agentId(request.params);
      return reply.code(201).send(await memory.relations.upsert(id, request.body));
    },
  );

  app.get('/api/memory/agents/:id/export', { schema: { summary: 'Everything the memory holds for an agent, as JSON', params: agentParams } }, async (request) =>
    memory.transfer.export(agentId(request.params)),
  );

  app.post(
    '/api/memory/agents/:id/import',
    { schema: { summary: 'Imports an export document (adds; same ids replace)', params: agentParams, body: importBody } },
    async (request) => {
      const id = agentId(request.params);
      const imported = await memory.transfer.import(id, request.body);
      memory.queue.kick();
      return { status: 'imported', agent_id: id, imported };
    },
  );
}
