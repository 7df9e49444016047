/** Sessions across all agents: list, search, detail, cleanup of orphans, delete, label. */
import { badRequest, pageQueryProperties, readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentServices } from '../services/context.ts';
import type { SessionSummary } from '../services/sessions.ts';
import { sessionView } from './sessions.ts';

const idOnly = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

export function globalSessionRoutes(app: Routes, s: AgentServices): void {
  const withAgent = (items: SessionSummary[]) =>
    items.map((i) => {
      const agent = s.registry.get(i.agent_id);
      return { ...i, agent_name: agent?.name ?? null, current: agent?.sessionId === i.session_id };
    });

  app.get(
    '/api/sessions',
    { schema: { summary: 'All sessions', querystring: { type: 'object', properties: { ...pageQueryProperties, agent_id: { type: 'string' } } } } },
    async (request) => {
      const page = readPage(request.query, { limit: 100, max: 500 });
      const agentId = request.query.agent_id;
      if (agentId !== undefined) requireUuid(agentId, 'agent_id');
      const { items, total } = await s.sessions.list({ agentId, ...page });
      return { items: withAgent(items), total, offset: page.offset, limit: page.limit };
    },
  );

  app.get(
    '/api/sessions/search',
    {
      schema: {
        summary: 'Sessions whose label, id or messages contain q',
        querystring: { type: 'object', properties: { ...pageQueryProperties, q: { type: 'string' }, agent_id: { type: 'string' } } },
      },
    },
    async (request) => {
      const q = request.query.q?.trim();
      if (!q) throw badRequest("query parameter 'q' is required");
      const agentId = request.query.agent_id;
      if (agentId !== undefined) requireUuid(agentId, 'agent_id');
      const page = readPage(request.query, { limit: 10, max: 100 });
      const { items, total } = await s.sessions.list({ agentId, q, ...page });
      return { items: withAgent(items), total, offset: page.offset, limit: page.limit, q };
    },
  );

  app.get('/api/sessions/:id', { schema: { summary: 'Session detail with messages', params: idOnly } }, async (request) => {
    return sessionView(s, await s.sessions.require(requireUuid(request.params.id, 'session id')));
  });

  app.post('/api/sessions/cleanup', { schema: { summary: 'Remove sessions whose agent no longer exists' } }, async () => {
    const removed = await s.sessions.deleteOrphans(new Set(s.registry.list().map((a) => a.id)));
    return { status: 'cleaned', removed };
  });

  app.delete('/api/sessions/:id', { schema: { summary: 'Delete a session and its messages', params: idOnly } }, async (request) => {
    const row = await s.sessions.require(requireUuid(request.params.id, 'session id'));
    await s.sessions.delete(row.id);
    s.runner.clearInterrupt(row.id);
    // An agent never stays without a current session.
    const agent = s.registry.get(row.agent_id);
    const replacement = agent?.sessionId === row.id ? await s.sessionStore.newSession(agent.id) : undefined;
    return { status: 'deleted', session_id: row.id, ...(replacement && { new_session_id: replacement }) };
  });

  app.put(
    '/api/sessions/:id/label',
    {
      schema: {
        summary: 'Label a session (null removes the label)',
        params: idOnly,
        body: { type: 'object', properties: { label: { type: ['string', 'null'], maxLength: 200 } }, required: ['label'] },
      },
    },
    async (request) => {
      const id = requireUuid(request.params.id, 'session id');
      const label = request.body.label === null ? null : request.body.label.trim();
      if (label === '') throw badRequest('label must not be empty (use null to remove it)');
      await s.sessions.setLabel(id, label);
      return { status: 'updated', session_id: id, label };
    },
  );
}
