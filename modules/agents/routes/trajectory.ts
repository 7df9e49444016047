/**
 * Message rule 6: a redacted audit bundle of one session. json → one object;
 * jsonl → a metadata line then one line per message (application/x-ndjson).
 */
import { createHash } from 'node:crypto';
import { badRequest, notFound, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentServices } from '../services/context.ts';
import { redactDeep } from '../services/redact.ts';
import { sessionParams } from './common.ts';
import { messageView } from './sessions.ts';

export function trajectoryRoutes(app: Routes, s: AgentServices): void {
  app.get(
    '/api/agents/:id/sessions/:session_id/trajectory',
    {
      schema: {
        summary: 'Redacted audit bundle of a session',
        params: sessionParams,
        querystring: { type: 'object', properties: { format: { type: 'string', description: 'json (default) or jsonl' } } },
      },
    },
    async (request, reply) => {
      const agentId = requireUuid(request.params.id, 'agent id');
      const sessionId = requireUuid(request.params.session_id, 'session id');
      const format = request.query.format ?? 'json';
      if (format !== 'json' && format !== 'jsonl') throw badRequest(`invalid format '${format}': use json or jsonl`);
      const agent = s.registry.get(agentId);
      if (!agent) throw notFound(`agent '${agentId}' not found`);
      const session = await s.sessions.get(sessionId);
      if (!session || session.agent_id !== agentId) throw notFound(`session '${sessionId}' not found for agent '${agentId}'`);
      const model = s.views.displayModel(agent);
      const messages = (await s.sessions.messages(sessionId)).map((m) => redactDeep(messageView(m)));
      const metadata = {
        agent_id: agent.id,
        agent_name: agent.name,
        session_id: sessionId,
        label: session.label,
        provider: model.provider,
        model: model.model,
        system_prompt_sha256: createHash('sha256').update(agent.systemPrompt).digest('hex'),
        service_version: s.ctx.kernel.version,
        message_count: messages.length,
        summary: session.summary === null ? null : redactDeep(session.summary),
        exported_at: new Date().toISOString(),
      };
      if (format === 'json') return reply.type('application/json; charset=utf-8').send({ schema_version: 1, metadata, messages });
      const lines = [JSON.stringify({ kind: 'metadata', schema_version: 1, ...metadata }), ...messages.map((m) => JSON.stringify({ kind: 'message', ...m }))];
      return reply.type('application/x-ndjson').send(`${lines.join('\n')}\n`);
    },
  );
}
