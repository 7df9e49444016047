/** Traces, metrics and logs (all from finished turns) of an agent. GET /api/agents/{id}/deliveries is the triggers module's. */
import { readPage, pageQueryProperties, type Routes } from '@talon/module-sdk';
import type { AgentServices } from '../services/context.ts';
import { agentParam, idParams } from './common.ts';

const pageQuery = { type: 'object', properties: { ...pageQueryProperties } } as const;
const turnsQuery = {
  type: 'object',
  properties: { ...pageQueryProperties, outcome: { type: 'string', enum: ['ok', 'error', 'stopped', 'interrupted'], default: 'error' } },
  additionalProperties: false,
} as const;

export function observeRoutes(app: Routes, s: AgentServices): void {
  app.get(
    '/api/agents/:id/traces',
    { schema: { summary: 'Recent turns: iterations, tool calls, timings', params: idParams, querystring: pageQuery } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const page = readPage(request.query, { limit: 20, max: 200 });
      return {
        agent_id: agent.id,
        traces: await s.traces.recent(agent.id, page.limit, page.offset),
        total: await s.traces.count(agent.id),
        offset: page.offset,
        limit: page.limit,
      };
    },
  );

  // Across agents: what went wrong lately, without reading each agent's traces (the dashboard's home).
  app.get(
    '/api/turns',
    { schema: { summary: "Recent turns of every agent with one outcome (default 'error'), newest first", querystring: turnsQuery } },
    async (request) => {
      const page = readPage(request.query, { limit: 20, max: 200 });
      const turns = await s.traces.recentByOutcome(request.query.outcome, page.limit, page.offset);
      return { turns, offset: page.offset, limit: page.limit };
    },
  );

  app.get('/api/agents/:id/metrics', { schema: { summary: 'Token counts, latency and error rates', params: idParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    return { ...(await s.traces.metrics(agent.id)), running: s.runner.isRunning(agent.id) };
  });

  app.get(
    '/api/agents/:id/logs',
    { schema: { summary: 'Recent log lines of the agent (one per turn)', params: idParams, querystring: pageQuery } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const page = readPage(request.query, { limit: 50, max: 500 });
      const logs = (await s.traces.recent(agent.id, page.limit, page.offset)).map((t) => ({
        timestamp: t.started_at,
        level: t.outcome === 'error' ? 'error' : 'info',
        outcome: t.outcome,
        message:
          t.outcome === 'error'
            ? `turn failed: ${t.error}`
            : `turn ${t.outcome}: ${t.iterations} iteration(s), ${t.steps.reduce((n, st) => n + st.tools.length, 0)} tool call(s), ${t.input_tokens}+${t.output_tokens} tokens in ${t.duration_ms} ms`,
        turn_id: t.turn_id,
        session_id: t.session_id,
        origin: t.origin,
        duration_ms: t.duration_ms,
      }));
      return { agent_id: agent.id, count: logs.length, logs };
    },
  );
}
