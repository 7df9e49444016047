/** Sessions of one agent: current session, list, create, switch, by-label, history, reset, compact. */
import { notFound, pageQueryProperties, readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentRecord, StoredMessage } from '@talon/agents';
import type { AgentServices } from '../services/context.ts';
import { estimateTokens, titleOf, type SessionRow } from '../services/sessions.ts';
import { agentParam, idParams, sessionParams } from './common.ts';

export function sessionRoutes(app: Routes, s: AgentServices): void {
  app.get('/api/agents/:id/session', { schema: { summary: 'The current session with its messages', params: idParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    return sessionView(s, await s.sessions.require(agent.sessionId));
  });

  app.get(
    '/api/agents/:id/sessions',
    { schema: { summary: "The agent's sessions", params: idParams, querystring: { type: 'object', properties: { ...pageQueryProperties } } } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const page = readPage(request.query, { limit: 100, max: 500 });
      const { items, total } = await s.sessions.list({ agentId: agent.id, ...page });
      return { items: items.map((i) => ({ ...i, current: i.session_id === agent.sessionId })), total, offset: page.offset, limit: page.limit };
    },
  );

  app.post(
    '/api/agents/:id/sessions',
    {
      schema: {
        summary: 'Create a session (does not switch to it)',
        params: idParams,
        body: { type: 'object', properties: { label: { type: 'string', minLength: 1, maxLength: 200 } } },
      },
    },
    async (request, reply) => {
      const agent = agentParam(s, request.params.id);
      const label = request.body.label;
      const sessionId = await s.sessions.create(agent.id, label);
      return reply.code(201).send({ session_id: sessionId, agent_id: agent.id, label: label ?? null });
    },
  );

  app.post('/api/agents/:id/sessions/:session_id/switch', { schema: { summary: 'Make a session current', params: sessionParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    const sessionId = await ownSession(s, agent, request.params.session_id);
    await s.registry.setSessionId(agent.id, sessionId);
    return { status: 'switched', agent_id: agent.id, session_id: sessionId };
  });

  app.get(
    '/api/agents/:id/sessions/by-label/:label',
    {
      schema: {
        summary: 'The session with that label',
        params: { type: 'object', properties: { id: { type: 'string' }, label: { type: 'string' } }, required: ['id', 'label'] },
      },
    },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const row = await s.sessions.byLabel(agent.id, request.params.label);
      if (!row) throw notFound(`agent has no session labelled '${request.params.label}'`);
      return sessionView(s, row);
    },
  );

  app.delete(
    '/api/agents/:id/history',
    { schema: { summary: "Clear the messages of all the agent's sessions (no new session)", params: idParams } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      for (const sessionId of await s.sessions.idsOf(agent.id)) await s.sessions.clear(sessionId);
      return { status: 'cleared', agent_id: agent.id, message: 'All history cleared' };
    },
  );

  app.post(
    '/api/agents/:id/session/reset',
    { schema: { summary: 'Start a new empty session (the old one stays resumable)', params: idParams } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      s.runner.clearInterrupt(agent.sessionId);
      const newSessionId = await s.sessionStore.newSession(agent.id);
      return { status: 'reset', agent_id: agent.id, new_session_id: newSessionId };
    },
  );

  app.post('/api/agents/:id/session/compact', { schema: { summary: 'Replace older messages with an LLM summary', params: idParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    const { message } = await s.sessionStore.compact(agent.id);
    return { status: 'compacted', message };
  });
}

/** The session id if it is a UUID (400) and one of the agent's sessions (404). */
export async function ownSession(s: AgentServices, agent: AgentRecord, sessionId: string): Promise<string> {
  requireUuid(sessionId, 'session id');
  if (!(await s.sessions.exists(agent.id, sessionId))) throw notFound(`session '${sessionId}' not found for agent '${agent.id}'`);
  return sessionId;
}

/** The spec's Session shape (plus label, title, summary and the branch's parent). */
export async function sessionView(s: AgentServices, row: SessionRow) {
  const messages = await s.sessions.messages(row.id);
  return {
    session_id: row.id,
    agent_id: row.agent_id,
    label: row.label,
    title: titleOf(row.label, messages.find((m) => m.role === 'User' && m.content.trim())?.content),
    parent_id: row.parent_id,
    forked_at: row.forked_at,
    message_count: messages.length,
    context_window_tokens: estimateTokens(messages, row.summary),
    summary: row.summary,
    created_at: row.created_at,
    updated_at: row.updated_at,
    messages: messages.map(messageView),
  };
}

export function messageView(m: StoredMessage) {
  const calls = (m.blocks ?? []).flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : []));
  const results = (m.blocks ?? []).flatMap((b) =>
    b.type === 'tool_result' ? [{ tool_use_id: b.toolUseId, content: b.content, is_error: Boolean(b.isError) }] : [],
  );
  const attachments = (m.blocks ?? []).filter((b) => b.type === 'image').length;
  return {
    role: m.role,
    content: m.content,
    created_at: m.createdAt,
    ...(calls.length && { tool_calls: calls }),
    ...(results.length && { tool_results: results }),
    ...(attachments && { images: attachments }),
    ...(m.stopped && { stopped: true }),
    ...(m.files?.length && { files: m.files }),
  };
}
