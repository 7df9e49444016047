import { badRequest, readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { MemoryConfig } from '../config.ts';
import type { Memory } from '../services/memory.ts';
import { createBody, listQuery, memoryParams, searchQuery, updateBody } from './schemas.ts';

export const LIST_PAGE = { limit: 10, max: 100 };
export const SEARCH_LIMIT = { limit: 10, max: 100 };

const optionalUuid = (value: string | undefined, what: string) => (value === undefined ? undefined : requireUuid(value, what));
const time = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : Date.parse(value));

/** Global proactive-memory endpoints: list, create, search, stats, maintenance, single items. */
export function entryRoutes(app: Routes, memory: Memory, config: () => MemoryConfig): void {
  app.get('/api/memory', { schema: { summary: 'All proactive memory entries (paginated, newest first)', querystring: listQuery } }, async (request) => {
    const q = request.query;
    const page = readPage(q, LIST_PAGE);
    const { items, total } = await memory.entries.list(
      { agentId: optionalUuid(q.agent_id, 'agent_id'), userId: q.user_id, level: q.level, category: q.category, tag: q.tag },
      page,
    );
    const cfg = config();
    return { memories: items, total, offset: page.offset, limit: page.limit, proactive_enabled: cfg.auto_memorize || cfg.auto_retrieve };
  });

  app.post('/api/memory', { schema: { summary: 'Adds a proactive memory entry', body: createBody } }, async (request, reply) => {
    const b = request.body;
    const item = await memory.entries.add({
      content: b.content,
      agentId: optionalUuid(b.agent_id, 'agent_id'),
      userId: b.user_id,
      sessionId: b.session_id,
      level: b.level,
      category: b.category,
      tags: b.tags,
      metadata: b.metadata,
      expiresAt: time(b.expires_at),
    });
    return reply.code(201).send(item);
  });

  app.get('/api/memory/search', { schema: { summary: 'Hybrid (FTS5 + vector) search', querystring: searchQuery } }, async (request) => {
    const q = request.query;
    if (q.q === undefined || !q.q.trim()) throw badRequest("query parameter 'q' is required");
    const limit = readPage({ limit: q.limit }, SEARCH_LIMIT).limit;
    const { hits, mode } = await memory.searchHits(q.q, {
      agentId: optionalUuid(q.agent_id, 'agent_id'),
      userId: q.user_id,
      sessionId: q.session_id,
      level: q.level,
      limit,
    });
    return { query: q.q, mode, results: hits, total: hits.length };
  });

  app.get('/api/memory/stats', { schema: { summary: 'Aggregate statistics' } }, async () => memory.stats());

  app.post('/api/memory/cleanup', { schema: { summary: 'Removes expired entries and stale ones (score below stale_score)' } }, async () =>
    memory.entries.cleanup({ stale: true }),
  );

  app.post('/api/memory/decay', { schema: { summary: 'Applies time decay to scores (once per period)' } }, async () => memory.entries.decay());

  app.post(
    '/api/memory/bulk-delete',
    {
      schema: {
        summary: 'Deletes entries by id',
        body: {
          type: 'object',
          properties: { ids: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 1000 } },
          required: ['ids'],
          additionalProperties: false,
        },
      },
    },
    async (request) => memory.entries.bulkDelete(request.body.ids),
  );

  app.put(
    '/api/memory/items/:memory_id',
    { schema: { summary: 'Updates an entry (the previous version goes to its history)', params: memoryParams, body: updateBody } },
    async (request) => {
      const id = requireUuid(request.params.memory_id, 'memory id');
      const b = request.body;
      return memory.entries.update(id, {
        content: b.content,
        tags: b.tags,
        level: b.level,
        category: b.category,
        metadata: b.metadata,
        expiresAt: time(b.expires_at),
      });
    },
  );

  app.delete('/api/memory/items/:memory_id', { schema: { summary: 'Deletes an entry', params: memoryParams } }, async (request) => {
    const id = requireUuid(request.params.memory_id, 'memory id');
    await memory.entries.require(id);
    await memory.entries.delete(id);
    return { status: 'deleted', id };
  });

  app.get('/api/memory/items/:memory_id/history', { schema: { summary: 'Edit history of an entry, oldest first', params: memoryParams } }, async (request) =>
    memory.entries.history(requireUuid(request.params.memory_id, 'memory id')),
  );

  app.get(
    '/api/memory/user/:user_id',
    {
      schema: {
        summary: 'Entries of one user',
        params: { type: 'object', properties: { user_id: { type: 'string', minLength: 1 } }, required: ['user_id'] },
        querystring: {
          type: 'object',
          properties: { limit: listQuery.properties.limit, offset: listQuery.properties.offset, level: listQuery.properties.level },
          additionalProperties: false,
        },
      },
    },
    async (request) => {
      const page = readPage(request.query, LIST_PAGE);
      const { items, total } = await memory.entries.list({ userId: request.params.user_id, level: request.query.level }, page);
      return { user_id: request.params.user_id, memories: items, total, offset: page.offset, limit: page.limit };
    },
  );
}
