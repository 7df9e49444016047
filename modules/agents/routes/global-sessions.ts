/** Sessions across all agents: list, search, detail, export, cleanup of orphans, delete, label, branch. */
import { badRequest, pageQueryProperties, readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentServices } from '../services/context.ts';
import type { SessionSummary } from '../services/sessions.ts';
import { sessionView } from './sessions.ts';
import { sessionMarkdown } from '../services/export.ts';

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

  app.get(
    '/api/sessions/:id/export',
    {
      schema: {
        summary: 'The session as a file to download: Markdown or JSON',
        params: idOnly,
        querystring: { type: 'object', properties: { format: { enum: ['md', 'json'], default: 'md' } }, additionalProperties: false },
      },
    },
    async (request, reply) => {
      const session = await sessionView(s, await s.sessions.require(requireUuid(request.params.id, 'session id')));
      const name = `session-${session.session_id.slice(0, 8)}`;
      if (request.query.format === 'json') {
        return reply.type('application/json; charset=utf-8').header('content-disposition', `attachment; filename="${name}.json"`).send(session);
      }
      const markdown = sessionMarkdown(session, s.registry.get(session.agent_id)?.name ?? null);
      return reply.type('text/markdown; charset=utf-8').header('content-disposition', `attachment; filename="${name}.md"`).send(markdown);
    },
  );

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

  app.post(
    '/api/sessions/:id/branches',
    {
      schema: {
        summary: 'Branch a session before one of its messages (edit a sent message, regenerate a reply); the session stays as it was',
        params: idOnly,
        body: {
          type: 'object',
          properties: {
            at: {
              type: 'integer',
              minimum: 0,
              description: "messages copied into the branch: the index (in the session's messages) of the message it replaces",
            },
            switch: { type: 'boolean', default: true, description: "make the branch its agent's current session" },
          },
          required: ['at'],
          additionalProperties: false,
        },
      },
    },
    async (request, reply) => {
      const row = await s.sessions.require(requireUuid(request.params.id, 'session id'));
      const { at } = request.body;
      const messages = await s.sessions.messages(row.id);
      if (at > messages.length) throw badRequest(`at (${at}) is past the end of the session (${messages.length} messages)`);
      const replaced = messages[at];
      // A branch starts where a person spoke: cutting between a tool call and its result, or inside a reply, is refused.
      if (replaced && (replaced.role !== 'User' || !replaced.content.trim()))
        throw badRequest(`message ${at} is not a message a person sent; a branch starts at one (or at the end)`);
      const branchId = await s.sessions.fork(row.id, at);
      const agent = s.registry.get(row.agent_id);
      const current = request.body.switch !== false && agent !== undefined;
      if (current) await s.registry.setSessionId(agent.id, branchId);
      return reply.code(201).send({ session_id: branchId, agent_id: row.agent_id, parent_id: row.id, forked_at: at, current });
    },
  );

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
