import { cappedLimitProperty, readLimit, type Routes } from '@talon/module-sdk';
import type { AuditTrail } from '@talon/audit';

/** The spec's "default 50, max 500": a larger limit is capped, not refused. */
const PAGE = { limit: 50, max: 500 };

const recentQuery = {
  type: 'object',
  properties: {
    limit: cappedLimitProperty(PAGE, 'entries to return, newest first'),
    n: { ...cappedLimitProperty(PAGE), description: "the reference's name for limit" },
    event_type: { type: 'string', minLength: 1, maxLength: 100, description: 'only entries of this event_type' },
    agent_id: { type: 'string', minLength: 1, maxLength: 100, description: 'only entries about this agent' },
    before: { type: 'integer', minimum: 1, description: 'only entries older than this id: the next page is ?before=<the last id of this one>' },
  },
  additionalProperties: false,
} as const;

export function auditRoutes(app: Routes, trail: AuditTrail): void {
  const recent = {
    schema: { summary: 'Latest audit entries, newest first', tags: ['audit'], querystring: recentQuery },
    config: { rateCost: 5 },
  } as const;
  const handler = async (request: { query: { limit?: number; n?: number; event_type?: string; agent_id?: string; before?: number } }) => {
    const { limit, n, event_type, agent_id, before } = request.query;
    return trail.recent({ limit: readLimit(n ?? limit, PAGE), event_type, agent_id, before });
  };
  app.get('/api/audit/recent', recent, handler);
  // The older listing's name for the same read.
  app.get('/api/audit/logs', { ...recent, schema: { ...recent.schema, summary: 'Alias of GET /api/audit/recent (older listing)' } }, handler);

  app.get(
    '/api/audit/verify',
    { schema: { summary: 'Walks the whole hash chain and reports every broken link', tags: ['audit'] }, config: { rateCost: 20 } },
    async () => trail.verify(),
  );
}
