/** GET /api/mcp/catalog and /api/mcp/catalog/{id}: installable MCP server templates. */
import { notFound, type Routes } from '@talon/module-sdk';
import type { Catalog, Template } from '../services/catalog.ts';
import type { McpManager } from '../services/manager.ts';

const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['id'] } as const;

export function catalogRoutes(app: Routes, catalog: Catalog, manager: McpManager): void {
  const entry = (t: Template) => ({
    ...t,
    installed: manager.list().some((c) => c.spec.templateId === t.id),
    install: {
      method: 'POST',
      path: '/api/mcp/servers',
      body: { template_id: t.id, credentials: Object.fromEntries(t.required_env.map((e) => [e.name, '...'])) },
    },
  });

  app.get('/api/mcp/catalog', { schema: { summary: 'Installable MCP server templates', tags: ['mcp'] } }, async () => {
    const entries = catalog.list().map(entry);
    return { entries, total: entries.length };
  });

  app.get(
    '/api/mcp/catalog/:id',
    { schema: { summary: 'One MCP catalogue template, with the credentials it needs and setup instructions', tags: ['mcp'], params: idParams } },
    async (request) => {
      const t = catalog.get(request.params.id);
      if (!t) throw notFound(`MCP catalogue template '${request.params.id}' not found`);
      return entry(t);
    },
  );
}
